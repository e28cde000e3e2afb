"""The application: one tool call from validated arguments to ``CallToolResult``, whatever the
transport.

``calls`` (``App``: open the document, the cache, the tool, the audit record), ``policy`` (the
``--policy`` file: each principal's roots, concurrency, rate and approvals), ``approvals``
(asking a human before a risky action), ``principal`` (who is calling), ``audit`` (one event per
call) and ``cache`` (results by document hash, tool and arguments). The transports (``stdio``,
``http``, ``batch``) sit above it; the tools, the pool and the boundary below.
"""
