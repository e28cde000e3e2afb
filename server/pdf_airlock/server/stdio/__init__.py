"""The stdio transport: one client, one process; fds 0 and 1 belong to the protocol.

``transport`` (the only code on fds 0 and 1, and the route each message takes), ``framing``
(bytes to messages and back, no I/O) and ``startup`` (the order a stdio server starts in).
"""
