"""The zygote's ctypes callbacks sealed read-and-execute (``pdf_airlock.worker.memory.closures``): no
page stays writable and executable, and the sealed page deadline's handler still answers.

Each check runs in a fresh interpreter: a sealed page must never take another callback, and the
test process makes its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

_TIMEOUT_S = 60


def _python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=_TIMEOUT_S,
        check=True,
    )
    return done.stdout


def test_a_sealed_callback_still_answers_from_a_read_and_execute_memfd() -> None:
    out = _python(
        """
        import ctypes, json
        from pdf_airlock.worker.memory import closures
        twice = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)(lambda x: 2 * x)
        address = ctypes.cast(twice, ctypes.c_void_p).value
        before = closures.writable_code_ranges([address])
        sealed = [closures.seal([twice]), closures.seal([twice])]
        after = closures.writable_code_ranges([address])
        holding = [line.split() for line in open("/proc/self/maps")
                   if int(line.split("-")[0], 16) <= address < int(line.split()[0].split("-")[1], 16)]
        print(json.dumps([len(before), sealed, after, twice(21), holding[0][1], holding[0][5:]]))
        """
    )
    before, sealed, after, answer, perms, path = json.loads(out)
    assert (before, sealed, after, answer) == (1, [1, 0], [], 42)
    assert perms == "r-xs" and path[0].startswith("/memfd:pdf-airlock-callbacks")


def test_the_sealed_page_deadline_still_ends_native_work_with_its_envelope() -> None:
    """The regression: the page deadline's handler, made at import, left the zygote (and every
    spare) a writable and executable page. Sealed as the zygote seals it, it still fires in the
    middle of a native call, writes its envelope and ends the process."""
    out = _python(
        """
        import json, os, time
        from pdf_airlock.worker import deadline
        sealed = deadline.seal()
        writable_code = [line for line in open("/proc/self/maps")
                         if "w" in line.split()[1] and "x" in line.split()[1]]
        read, write = os.pipe()
        if os.fork() == 0:
            os.close(read)
            deadline.enable(write)
            envelope = deadline.error_envelope("timeout", "page 3 ran out of time", {"page": 3})
            with deadline.armed(0.05, envelope):
                time.sleep(30)  # one native call: the handler must end it
            os._exit(7)
        os.close(write)
        _, status = os.wait()
        answer = os.read(read, 65536).decode()
        print(json.dumps([sealed, writable_code, os.waitstatus_to_exitcode(status), json.loads(answer)]))
        """
    )
    sealed, writable_code, exit_code, answer = json.loads(out)
    assert (sealed, writable_code, exit_code) == (1, [], 0)
    assert answer["error"]["code"] == "timeout" and answer["error"]["details"] == {"page": 3}
