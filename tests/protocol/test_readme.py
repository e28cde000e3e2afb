"""The examples of the README and of docs/*.md work as written.

Every ``pdf-airlock call`` in a code block of the README or of a file in docs/ (the per-tool
examples live in docs/tools.md, the ``batch`` one in docs/batch.md) runs for real (the installed
console script, from the project root, the real supervisor and sandbox) and must succeed; where a
``json`` block follows the command's block (with no heading in between), it shows the answer of
the block's last command, and every key and every value it shows must be in the real answer
(``…`` elides: a string up to ``…`` is a prefix, an elided list item or key is skipped; cursors
are opaque and not compared). An example showing an error must fail with exactly the code shown.
The ``batch`` example runs on copies of the bundled samples, inside a temporary folder, with
``--out`` there too. ``examples/generate.py`` must remake the committed sample PDFs byte for
byte.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pikepdf
import pytest
from conftest import PROJECT

from pdf_airlock.server.tools.registry import TOOLS

README = PROJECT / "README.md"
TOOLS_DOC = PROJECT / "docs" / "tools.md"
# Every file whose examples run: the README, and docs/ (docs/performance.md is generated and
# holds none).
DOCUMENTS = (README, *sorted((PROJECT / "docs").glob("*.md")))
# Every published tool: a tool added without examples fails the test below.
ALL_TOOLS = frozenset(TOOLS)
EXAMPLES = PROJECT / "examples"
PROGRAM = Path(sys.executable).parent / "pdf-airlock"
CALL_TIMEOUT_S = 120
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
HEADING = re.compile(r"^#+ ", re.MULTILINE)
ELIDED = "\x00"  # stands for a `…` outside JSON strings while the shown JSON is made parseable
ANY = "…"  # a value an example elides: matches whatever the answer holds there
NOT_COMPARED = {"cursor"}  # opaque and signed: its text is not the example's to show
KEPT_ENVIRONMENT = {"PDF_AIRLOCK_STRICT_LOADS"}  # the suite's loud lazy-load check stays on


@dataclass(frozen=True)
class Example:
    """One documented command, the file and line it is on, and the JSON answer shown for it, if
    any."""

    argv: list[str]
    document: Path
    line: int
    shown: Any = None

    @property
    def id(self) -> str:
        return f"{self.document.stem}-line{self.line}-{self.argv[1]}-{self.argv[2]}"


def _commands(body: str, first_line: int) -> list[tuple[int, list[str]]]:
    """The shell commands of a code block as argv lists, continuation lines joined, with the
    line of its file each starts on."""
    commands: list[tuple[int, list[str]]] = []
    pending, start = "", first_line
    for number, text in enumerate(body.splitlines(), start=first_line):
        start = start if pending else number
        if text.endswith("\\"):
            pending += text[:-1] + " "
            continue
        argv = shlex.split(pending + text, comments=True)
        pending = ""
        if argv:
            commands.append((start, argv))
    return commands


def lenient_json(text: str) -> Any:
    """An example's JSON with its `…` elisions made valid: trailing elided items or key-value
    pairs are dropped, any other `…` outside a string stands for any one value (``ANY``)."""
    out: list[str] = []
    in_string = escaped = False
    for char in text:
        if in_string:
            in_string = escaped or char != '"'
            escaped = not escaped and char == "\\"
        elif char == '"':
            in_string = True
        out.append(ELIDED if char == "…" and not in_string else char)
    joined = re.sub(rf",\s*{ELIDED}\s*(?=[\]}}])", "", "".join(out))
    joined = re.sub(rf"([\[{{])\s*{ELIDED}\s*(?=[\]}}])", r"\1", joined)
    return json.loads(joined.replace(ELIDED, json.dumps(ANY)))


def _is_airlock(argv: list[str], command: str) -> bool:
    return len(argv) > 2 and Path(argv[0]).name == "pdf-airlock" and argv[1] == command


def documented_examples(command: str, document: Path) -> list[Example]:
    """Every ``pdf-airlock COMMAND`` in the code blocks of ``document``, with the JSON shown
    after it."""
    text = document.read_text(encoding="utf-8")
    blocks = list(FENCE.finditer(text))
    examples = []
    for index, block in enumerate(blocks):
        if block.group(1) not in ("sh", "bash", "shell"):
            continue
        following = blocks[index + 1] if index + 1 < len(blocks) else None
        shows = (
            following is not None
            and following.group(1) == "json"
            and not HEADING.search(text, block.end(), following.start())
        )
        commands = _commands(block.group(2), text.count("\n", 0, block.start(2)) + 1)
        found = [Example(argv, document, line) for line, argv in commands if _is_airlock(argv, command)]
        if found and shows and following is not None and found[-1].argv == commands[-1][1]:
            last = found[-1]
            found[-1] = Example(last.argv, document, last.line, lenient_json(following.group(2)))
        examples.extend(found)
    return examples


def examples(command: str) -> list[Example]:
    """Every documented ``pdf-airlock COMMAND``: the README's, then those of docs/."""
    return [example for document in DOCUMENTS for example in documented_examples(command, document)]


def _environment() -> dict[str, str]:
    """The caller's environment without server settings, so the example's flags alone apply."""
    return {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("PDF_AIRLOCK_") or key in KEPT_ENVIRONMENT
    }


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PROGRAM), *argv[1:]],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=_environment(),
        timeout=CALL_TIMEOUT_S,
        check=False,
    )


def differences(shown: Any, real: Any, where: str = "") -> list[str]:
    """Where ``real`` lacks a key or a value that ``shown`` (an example's JSON) states."""
    if shown == ANY:
        return []
    if isinstance(shown, dict):
        if not isinstance(real, dict):
            return [f"{where or '(top)'}: an object in the example, {real!r} in the answer"]
        found = []
        for key, value in shown.items():
            if key not in real:
                found.append(f"{where}.{key}: missing from the answer")
            elif key not in NOT_COMPARED:
                found.extend(differences(value, real[key], f"{where}.{key}"))
        return found
    if isinstance(shown, list):
        if not isinstance(real, list) or len(real) < len(shown):
            return [f"{where}: {len(shown)} item(s) in the example, {real!r} in the answer"]
        return [diff for i, item in enumerate(shown) for diff in differences(item, real[i], f"{where}[{i}]")]
    if isinstance(shown, str) and "…" in shown:
        prefix = shown.split("…")[0]
        matches = isinstance(real, str) and real.startswith(prefix)
        return [] if matches else [f"{where}: the example shows {shown!r}, the answer {real!r}"]
    if shown != real or type(shown) is not type(real):
        return [f"{where}: the example shows {shown!r}, the answer {real!r}"]
    return []


CALLS = examples("call")
BATCHES = examples("batch")


def test_the_readme_and_the_tools_doc_have_an_example_for_every_tool() -> None:
    """The parser of this file finds the examples (a broken fence or prefix would skip them):
    the README runs one call of each tool, and docs/tools.md shows each tool's answer."""
    assert {example.argv[2] for example in CALLS if example.document == README} >= ALL_TOOLS
    in_tools_doc = [example for example in CALLS if example.document == TOOLS_DOC]
    assert {example.argv[2] for example in in_tools_doc if example.shown is not None} >= ALL_TOOLS
    assert all(example.shown is not None for example in in_tools_doc if example.argv[2] != "pdf_read")
    assert BATCHES


@pytest.mark.parametrize("example", CALLS, ids=[example.id for example in CALLS])
def test_call_example_runs_as_shown(example: Example) -> None:
    done = _run(example.argv, PROJECT)
    payload = json.loads(done.stdout)
    shown = example.shown if isinstance(example.shown, dict) else {}
    shown_error = (shown.get("structuredContent", shown).get("error") or {}).get("code")
    result = payload["structuredContent"]
    if shown.get("isError") or shown_error:
        assert (done.returncode, payload["isError"]) == (1, True), done.stderr[-2000:]
        assert result["error"]["code"] == shown_error
    else:
        assert (done.returncode, payload["isError"]) == (0, False), done.stdout[-2000:]
    target = payload if "structuredContent" in shown else result
    found = differences(shown, target)
    assert not found, "\n".join(found)


# The flags of the documented batch examples that take a value (not an input to make).
VALUED_FLAGS = ("--out", "--chunks", "--jobs", "--json", "--root", "--shard", "--documents-per-child")


def _inputs(argv: list[str], folder: Path) -> list[str]:
    """The batch command with its named inputs made in ``folder`` from the bundled samples, and
    its ``--out`` (and ``--chunks``) moved into ``folder`` whatever the example names."""
    assert "--out" in argv, "a batch example without --out would write where the test cannot check"
    argv = list(argv)
    for flag in ("--out", "--chunks"):
        if flag in argv:
            argv[argv.index(flag) + 1] = str(folder / Path(argv[argv.index(flag) + 1]).name)
    samples = ["welcome.pdf", "report.pdf", "two-columns.pdf"]
    for index, arg in enumerate(argv[3:], start=3):
        if arg.startswith("-") or argv[index - 1] in VALUED_FLAGS:
            continue
        assert not Path(arg).is_absolute() and ".." not in Path(arg).parts, (
            f"{arg} is outside the temporary folder"
        )
        target = folder / arg
        if arg.endswith("/"):
            target.mkdir(parents=True)
            for name in samples[:2]:
                shutil.copyfile(EXAMPLES / name, target / name)
        else:
            shutil.copyfile(EXAMPLES / samples[2], target)
    return argv


def _shards(argv: list[str], cwd: Path) -> list[dict[str, Any]]:
    """A sharded example (``--shard I/N``) run as every shard of N, then ``batch-merge``d as
    docs/batch.md shows: the merged lines, each document once."""
    flag = argv.index("--shard")
    count = int(argv[flag + 1].split("/")[1])
    for index in range(count):
        done = _run([*argv[: flag + 1], f"{index}/{count}", *argv[flag + 2 :]], cwd)
        assert done.returncode == 0, done.stderr[-2000:]
    out, merged = argv[argv.index("--out") + 1], cwd / "merged.jsonl"
    pairs = itertools.pairwise(argv[2:])
    inputs = [arg for before, arg in pairs if not arg.startswith("-") and before not in VALUED_FLAGS]
    roots = ["--root", argv[argv.index("--root") + 1]] if "--root" in argv else []
    merge = _run([argv[0], "batch-merge", out, "--merged", str(merged), "--inputs", *inputs, *roots], cwd)
    assert merge.returncode == 0, merge.stderr[-2000:]
    return [json.loads(line) for line in merged.read_text().splitlines()]


@pytest.mark.parametrize("example", BATCHES, ids=[example.id for example in BATCHES])
def test_batch_example_runs_in_a_temporary_folder(example: Example, tmp_path: Path) -> None:
    argv = _inputs(example.argv, tmp_path)
    if "--shard" in argv:
        lines = _shards(argv, tmp_path)
        assert sorted(line["path"] for line in lines) == sorted({line["path"] for line in lines})
    else:
        done = _run(argv, tmp_path)
        assert done.returncode == 0, done.stderr[-2000:]
        lines = [json.loads(line) for line in Path(argv[argv.index("--out") + 1]).read_text().splitlines()]
    assert len(lines) == len(list(tmp_path.rglob("*.pdf"))) == 3
    assert all(line["ok"] and line["complete"] and line["tool"] == argv[2] for line in lines)
    if "--chunks" in argv:
        chunks = [
            json.loads(line) for line in Path(argv[argv.index("--chunks") + 1]).read_text().splitlines()
        ]
        assert {chunk["sha256"] for chunk in chunks} == {line["sha256"] for line in lines}


def _generate(folder: Path) -> None:
    subprocess.run([sys.executable, str(EXAMPLES / "generate.py"), str(folder)], check=True, timeout=120)


def test_generate_py_remakes_the_committed_examples(tmp_path: Path) -> None:
    _generate(tmp_path)
    first = {path.name: path.read_bytes() for path in tmp_path.glob("*.pdf")}
    _generate(tmp_path)
    assert {path.name: path.read_bytes() for path in tmp_path.glob("*.pdf")} == first
    committed = {path.name: path.read_bytes() for path in EXAMPLES.glob("*.pdf")}
    assert sorted(first) == sorted(committed)
    assert _decrypted(first.pop("encrypted.pdf")) == _decrypted(committed.pop("encrypted.pdf"))
    assert first == committed  # the one file with random bytes (AES salts and IVs) is compared above


def _decrypted(data: bytes) -> bytes:
    """The document opened with the documented password and written without encryption."""
    out = io.BytesIO()
    with pikepdf.open(io.BytesIO(data), password="airlock") as pdf:
        assert pdf.encryption.R == 6
        pdf.save(out, deterministic_id=True, encryption=False)
    return out.getvalue()
