"""pdf-airlock supervisor: the trusted half.

Owns the stdio transport and the MCP session, validates tool arguments, applies the path
policy, runs every parse in a sandboxed job child (through the zygote in ``worker``), and
validates what comes back. It never parses a PDF and never imports a PDF library.
"""

__version__ = "0.1.0"
