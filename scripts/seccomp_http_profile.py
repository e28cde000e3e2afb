"""Write seccomp/profile-http.json: the container profile (seccomp/profile.json) plus the
syscalls a listening HTTP server needs, for ``serve --transport streamable-http``, as a trace of
tests/container/test_container_http.py shows them (strace on the private dockerd's containerd, as
``scripts/seccomp_profile.py derive`` does): sockets of the internet families (IPv6 too, for
``--host ::``; unix, which glibc's user lookup tries), bound, listened on and accepted from;
``connect`` (that lookup; and a JWKS fetched from an identity provider's URL); ``eventfd2`` for
its event loop (uvloop's libuv wakes its loop with an eventfd; libuv's optional io_uring stays
refused, as in the base profile, and libuv does without it); and the ``ioctl`` requests
``FIOCLEX``/``FIONCLEX`` (uvloop starts the zygote through ``os.set_inheritable``).

    python scripts/seccomp_http_profile.py          # rewrite seccomp/profile-http.json
    python scripts/seccomp_http_profile.py --check  # exit 1 if it is not what this would write

The stdio profile has no way to accept a connection: that is the point of ``--network none``.
The HTTP mode adds exactly these; tests/container/test_container_http.py runs the image under the result.
"""

from __future__ import annotations

import json
import socket
import sys
import termios
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASE = ROOT / "seccomp" / "profile.json"
PROFILE = ROOT / "seccomp" / "profile-http.json"
LISTENING = ("accept", "accept4", "bind", "connect", "listen", "setsockopt")
EVENT_LOOP = ("eventfd2",)
FAMILIES = (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6)  # socket(2)'s first argument
IOCTLS = (termios.FIOCLEX, termios.FIONCLEX)  # ioctl(2)'s second argument
_LOW_32 = 0xFFFFFFFF


def derived() -> str:
    profile = json.loads(BASE.read_text())
    allow = profile["syscalls"][0]
    assert allow.get("action") == "SCMP_ACT_ALLOW" and not allow.get("args"), "unexpected first rule"
    allow["names"] = sorted(set(allow["names"]) | set(LISTENING) | set(EVENT_LOOP))
    profile["syscalls"][1:1] = [_allow("socket", 0, int(family)) for family in FAMILIES] + [
        _allow("ioctl", 1, request) for request in IOCTLS
    ]
    return json.dumps(profile, indent=2) + "\n"


def _allow(name: str, index: int, value: int) -> dict[str, object]:
    """``name`` allowed when its argument ``index`` (an int: its low 32 bits) is ``value``."""
    args = [{"index": index, "value": _LOW_32, "valueTwo": value, "op": "SCMP_CMP_MASKED_EQ"}]
    return {"names": [name], "action": "SCMP_ACT_ALLOW", "args": args}


def main() -> int:
    text = derived()
    if "--check" in sys.argv[1:]:
        return 0 if PROFILE.exists() and PROFILE.read_text() == text else 1
    PROFILE.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
