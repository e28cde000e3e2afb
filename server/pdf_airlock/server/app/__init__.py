"""The application: one tool call from validated arguments to ``CallToolResult``, whatever the
transport.

``calls`` (``App``: open the document, the cache, the tool, the audit record), ``policy`` (the
``--policy`` file: each principal's roots, concurrency, rate and approvals), ``approvals``
(asking a human before a risky action, the way each protocol era can) with ``approval_state``
(the signed state of a question asked across two requests), ``principal`` (who is calling),
``audit`` (one event per call), ``cache`` (results by document hash, tool and arguments),
``resources`` and ``delivery`` (answers kept as resources for the principal that asked, and the
answer that links to one) and ``completions`` (documents by path, pages by label). The
transports (``stdio``, ``http``, ``batch``) and the protocol (``mcp``) sit above it; the tools,
the pool and the boundary below.
"""
