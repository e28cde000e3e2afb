"""The signing keys bearer tokens are checked against: a JWKS file read once, or a JWKS URL.

A URL (``RemoteKeys``) is fetched as a whole key set and the set replaces the last one, so a key
the identity provider withdraws stops verifying at the next fetch:

- **Refresh.** A set older than ``--auth-jwks-refresh`` is fetched again before it is used
  (tokens remembered by ``JwtVerifier`` are checked against the current set as well); while
  that fetch is under way, other requests go on with the set in hand. If the fetch fails, the
  set fetched last keeps serving for at most ``MAX_STALE_REFRESHES`` refresh periods after it
  was fetched; then no key verifies until a fetch succeeds.
- **A token naming an unknown ``kid``** fetches the set again (a key the provider has just
  added), at most once per ``--auth-jwks-cooldown``, which follows a failed fetch as it follows
  a good one: tokens with made-up ``kid`` values cannot make the server hammer its provider, nor
  wait on it in numbers. A ``kid`` still missing after a fetch is remembered as unknown until the
  next refresh (``NEGATIVE_KIDS`` of them): it is refused without a fetch.
- **Fetching** runs in a worker thread of its own limiter (one fetch at a time; requests
  needing the same fetch wait for that one), never the threads that open documents. It follows
  no redirect, reads at most ``MAX_JWKS_BYTES`` and gives up after ``FETCH_TIMEOUT_S``.
  ``http://`` is refused at start-up unless the URL names a loopback address
  (``http/options.py``).
"""

from __future__ import annotations

import http.client
import json
import math
import time
import urllib.request
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import anyio
import anyio.to_thread
import jwt
import structlog

__all__ = ["FETCH_TIMEOUT_S", "FileKeys", "KeyUnavailable", "RemoteKeys", "fetch_jwks", "load_keys"]

log = structlog.get_logger(__name__)

FETCH_TIMEOUT_S: Final = 10.0
MAX_JWKS_BYTES: Final = 1 << 20  # a key set is a few KiB
MAX_STALE_REFRESHES: Final = 12  # a set whose refresh keeps failing serves this many periods more
NEGATIVE_KIDS: Final = 1024  # unknown ``kid`` values remembered


class KeyUnavailable(Exception):
    """No key verifies this token; ``str(exc)`` is a reason safe to show and log."""


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a 3xx is then an HTTPError: the key set is served where it was configured


_OPENER: Final = urllib.request.build_opener(_NoRedirect)


def fetch_jwks(url: str, timeout_s: float = FETCH_TIMEOUT_S) -> dict[str | None, jwt.PyJWK]:
    """The keys at ``url`` by ``kid`` (blocking); ``OSError`` or ``ValueError`` if they cannot
    be had."""
    headers = {"Accept": "application/json", "User-Agent": "pdf-airlock"}
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 (load_keys: https:// or http://)
    with _OPENER.open(request, timeout=timeout_s) as response:
        body = response.read(MAX_JWKS_BYTES + 1)
    if len(body) > MAX_JWKS_BYTES:
        raise ValueError(f"the key set is over {MAX_JWKS_BYTES} bytes")
    return _keys_of(json.loads(body))


def _keys_of(document: object) -> dict[str | None, jwt.PyJWK]:
    if not isinstance(document, dict):
        raise ValueError("the key set is not a JSON object")
    try:
        keyset = jwt.PyJWKSet.from_dict(document)
    except (jwt.PyJWKSetError, jwt.InvalidKeyError) as exc:
        raise ValueError(f"the key set holds no usable key: {type(exc).__name__}") from exc
    return {key.key_id: key for key in keyset.keys}


class FileKeys:
    """A JWKS file, read once at start."""

    def __init__(self, path: str) -> None:
        try:
            self._keys = _keys_of(json.loads(Path(path).read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            raise ValueError(f"cannot load the JWKS file {path}: {type(exc).__name__}") from exc

    async def get(self, kid: str | None) -> jwt.PyJWK:
        key = self.current(kid)
        if key is None:
            raise KeyUnavailable("token is signed by an unknown key")
        return key

    def current(self, kid: str | None) -> jwt.PyJWK | None:
        key = self._keys.get(kid)
        if key is None and kid is None and len(self._keys) == 1:
            key = next(iter(self._keys.values()))
        return key


class RemoteKeys:
    """A JWKS URL, fetched as a whole set: refreshed, fetched again for a new ``kid`` under a
    cooldown, unknown ``kid`` values remembered."""

    def __init__(
        self,
        url: str,
        refresh_s: float,
        cooldown_s: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        fetch: Callable[[str], dict[str | None, jwt.PyJWK]] = fetch_jwks,
    ) -> None:
        self.url = url
        self.refresh_s = refresh_s
        self.cooldown_s = cooldown_s
        self.fetches = 0  # attempts, good or not
        self._last_fetch_ok = False
        self._clock = clock
        self._fetch = fetch
        self._keys: dict[str | None, jwt.PyJWK] = {}
        self._fetched_at = -math.inf  # when the last good fetch ended
        self._tried_at = -math.inf  # when the last attempt ended
        self._unknown: OrderedDict[str, float] = OrderedDict()  # kid -> when a fetch lacked it
        self._lock: anyio.Lock | None = None  # made in the event loop, on first use
        self._limiter: anyio.CapacityLimiter | None = None

    def current(self, kid: str | None) -> jwt.PyJWK | None:
        """The key ``kid`` names in a set still within its refresh period, without fetching."""
        if kid is None or self._clock() - self._fetched_at >= self.refresh_s:
            return None
        return self._keys.get(kid)

    async def get(self, kid: str | None) -> jwt.PyJWK:
        if kid is None:
            raise KeyUnavailable("token names no key (kid)")
        if self._clock() - self._fetched_at >= self.refresh_s and not self._fetching():
            await self._refresh()  # stale: fetched again first (a withdrawn key goes here)
        key = self._usable().get(kid)
        if key is not None:
            return key
        missing_at = self._unknown.get(kid)
        if missing_at is not None and self._clock() - missing_at < self.refresh_s:
            raise KeyUnavailable("token is signed by an unknown key")
        fetched = await self._refresh()
        keys = self._usable()
        if not keys:
            raise KeyUnavailable("the signing keys cannot be fetched")
        key = keys.get(kid)
        if key is None:
            if fetched:
                self._remember_unknown(kid)
            raise KeyUnavailable("token is signed by an unknown key")
        return key

    def _fetching(self) -> bool:
        """A fetch is under way: until it ends, the set in hand serves the keys it holds (a
        known key is not held up by a slow provider; a token needing the new set waits)."""
        return self._lock is not None and self._lock.locked()

    def _usable(self) -> dict[str | None, jwt.PyJWK]:
        """The set, unless its refreshes have failed for too long."""
        if self._clock() - self._fetched_at >= self.refresh_s * (1 + MAX_STALE_REFRESHES):
            return {}
        return self._keys

    def _remember_unknown(self, kid: str) -> None:
        self._unknown[kid] = self._clock()
        self._unknown.move_to_end(kid)
        while len(self._unknown) > NEGATIVE_KIDS:
            self._unknown.popitem(last=False)

    async def _refresh(self) -> bool:
        """Fetch the set again unless the cooldown forbids it; True if this call fetched it
        successfully (or waited for another call's successful fetch)."""
        if self._lock is None:
            self._lock = anyio.Lock()
            self._limiter = anyio.CapacityLimiter(1)
        seen = self.fetches
        async with self._lock:
            if self.fetches != seen:  # a fetch ended while this request waited: it stands
                return self._last_fetch_ok
            if self._clock() - self._tried_at < self.cooldown_s:
                return False
            self.fetches += 1
            try:
                keys = await anyio.to_thread.run_sync(self._fetch, self.url, limiter=self._limiter)
            except (OSError, ValueError, http.client.HTTPException) as exc:
                log.warning("jwks_fetch_failed", url=self.url, reason=type(exc).__name__)
                self._last_fetch_ok = False
                return False
            finally:
                self._tried_at = self._clock()  # the cooldown runs from the end of the attempt
            self._keys = keys
            self._fetched_at = self._tried_at
            self._last_fetch_ok = True
            for kid in [kid for kid in self._unknown if kid in keys]:
                del self._unknown[kid]
            log.info("jwks_fetched", url=self.url, keys=len(keys))
            return True


def load_keys(
    source: str, refresh_s: float, cooldown_s: float, clock: Callable[[], float]
) -> FileKeys | RemoteKeys:
    """The key source ``--auth-jwks`` names: a URL, or a file read now (``ValueError`` if bad)."""
    if source.startswith(("https://", "http://")):
        return RemoteKeys(source, refresh_s, cooldown_s, clock=clock)
    return FileKeys(source)
