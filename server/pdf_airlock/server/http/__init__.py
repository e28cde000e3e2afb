"""The Streamable HTTP transport: a shared MCP service behind OAuth (docs/deployment.md).

``options`` (flags, standard library only), ``serve`` (pool, uvicorn, signals), ``routes`` (the
Starlette application), ``wire`` (uvicorn's httptools protocol) and ``connections`` (its limits
before any request), ``auth`` (bearer JWTs against a JWKS, RFC 9728) and ``jwks`` (the keys),
``guards`` (Host, Origin, body size, per-tool scopes), ``quotas`` (sessions and bodies per
principal), ``admission`` (a call's principal, its policy rule and limits, approvals),
``transport`` and ``direct`` (the SDK's session transport, and the direct ``tools/call``
route), ``events`` (resumable streams), ``metrics`` (Prometheus) and ``health`` (probes).
"""
