"""The tools: one module per MCP tool (``TOOL = ToolSpec(...)``, found by ``registry``), and
what they share: ``base`` (the declaration and publishing), ``models`` (argument and result
pieces), ``untrusted`` (bounds of what a child may return), ``cursors``, ``schema``,
``page_counts``, ``read_two_ended`` and ``chunks``.
"""
