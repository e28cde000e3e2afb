"""Write seccomp/profile-http.json: the container profile (seccomp/profile.json) plus the
syscalls a listening HTTP server needs, for ``serve --transport streamable-http``: accepting
connections, and ``eventfd2`` for its event loop (uvloop's libuv wakes its loop with an eventfd;
libuv's optional io_uring stays refused, as in the base profile, and libuv does without it).

    python scripts/seccomp_http_profile.py          # rewrite seccomp/profile-http.json
    python scripts/seccomp_http_profile.py --check  # exit 1 if it is not what this would write

The stdio profile has no way to accept a connection: that is the point of ``--network none``.
The HTTP mode adds exactly these; tests/container/test_container_http.py runs the image under the result.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASE = ROOT / "seccomp" / "profile.json"
PROFILE = ROOT / "seccomp" / "profile-http.json"
LISTENING = ("accept", "accept4", "bind", "listen", "setsockopt")
EVENT_LOOP = ("eventfd2",)


def derived() -> str:
    profile = json.loads(BASE.read_text())
    allow = profile["syscalls"][0]
    assert allow.get("action") == "SCMP_ACT_ALLOW" and not allow.get("args"), "unexpected first rule"
    allow["names"] = sorted(set(allow["names"]) | set(LISTENING) | set(EVENT_LOOP))
    return json.dumps(profile, indent=2) + "\n"


def main() -> int:
    text = derived()
    if "--check" in sys.argv[1:]:
        return 0 if PROFILE.exists() and PROFILE.read_text() == text else 1
    PROFILE.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
