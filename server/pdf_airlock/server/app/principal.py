"""Who a call is made for, as the bearer token says (``pdf_airlock.server.http.auth``); standard
library only, so the policy file can be read without the HTTP stack."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Principal"]


@dataclass(frozen=True, slots=True)
class Principal:
    """The token's subject, its issuer, its groups and scopes."""

    subject: str
    issuer: str
    groups: tuple[str, ...] = ()
    scopes: frozenset[str] = frozenset()
