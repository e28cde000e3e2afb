"""``/healthz`` (the process answers) and ``/readyz`` (a warm zygote, and the sandbox self-test
passed with every ``--require-sandbox`` layer active): the probes of a load balancer or Kubernetes.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import JSONResponse

from pdf_airlock.server.pool.pool import Pool

__all__ = ["Health"]


@dataclass(slots=True)
class Health:
    """Readiness state; ``self_test`` is set once the start-up probe has passed."""

    pool: Pool
    self_test: bool = False

    async def healthz(self, request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    async def readyz(self, request: Request) -> JSONResponse:
        zygote = self.pool.ready()
        ready = zygote and self.self_test
        body = {"status": "ready" if ready else "not_ready", "zygote": zygote, "self_test": self.self_test}
        return JSONResponse(body, status_code=200 if ready else 503)
