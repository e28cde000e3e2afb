"""The Streamable HTTP transport: a shared MCP service behind OAuth (docs/deployment.md).

``options`` (flags, standard library only), ``serve`` (pool, uvicorn, signals), ``app`` (the
routes), ``auth`` (bearer JWTs against a JWKS, RFC 9728), ``guards`` (Origin, body size,
per-tool scopes), ``calls`` (principal, policy, limits), ``policy`` (the TOML policy file),
``approval`` (elicitation), ``metrics`` (Prometheus) and ``health`` (probes).
"""
