"""The MCP protocol both transports use: the handshake (``handshake``), the early
``tools/list`` answer (``early_tools_list``), the direct ``tools/call`` route (``direct_calls``)
and the SDK's low-level server wired to the application (``sdk_server``).
"""
