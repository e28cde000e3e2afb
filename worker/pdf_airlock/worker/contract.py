"""The contract between the two halves: the only worker module the supervisor may import.

It names what crosses the trust boundary and nothing else: the module the zygote runs, the
environment switches the supervisor may pass it, the job kinds reserved for the test suite, the
error codes a job child may report, the names of the sandbox layers, the kinds of line a job
child writes before its reply, a job's limits (OCR's among them), and the job protocol: every
message between the supervisor, the zygote and a job child (``Job`` ... ``Exit``, ``Answer`` and
``Failure``), each with ``to_wire()`` (one JSON object) and a ``from_wire()`` that checks the shape
and raises ``ProtocolError``, never ``KeyError``. It imports nothing but the standard library, so
loading it loads no PDF engine (tests/unit/test_boundaries.py).

Messages of a ``WorkerError`` must never contain document bytes or passwords: the supervisor
sanitises them and maps any code it does not know to ``internal``.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, Final, TypeVar

__all__ = [
    "LINE_KINDS",
    "MARKDOWN_MAX_LEVEL",
    "MARKDOWN_PAGE_SEPARATOR",
    "OCR_LIMITS",
    "PROBE_KIND",
    "SANDBOX_LAYERS",
    "STRICT_LOADS_ENV",
    "TEST_HOOKS_ENV",
    "TEST_KINDS",
    "WORKER_CODES",
    "ZYGOTE_MODULE",
    "Answer",
    "Assigned",
    "Drop",
    "Exit",
    "Failure",
    "Job",
    "Kill",
    "Limits",
    "Lost",
    "OcrLimitError",
    "OcrLimits",
    "Order",
    "ProtocolError",
    "Ready",
    "Refused",
    "Released",
    "Reply",
    "Report",
    "Retire",
    "Spare",
    "Started",
    "WorkerError",
    "decode_order",
    "decode_reply",
    "decode_report",
]

# The supervisor starts the zygote as ``python -I -m ZYGOTE_MODULE``.
ZYGOTE_MODULE: Final = "pdf_airlock.worker.zygote"

# Switches the supervisor may pass to the zygote; only the server's own environment sets them.
# TEST_HOOKS_ENV=1 adds the TEST_KINDS to the job table and lets a job skip sandbox layers.
TEST_HOOKS_ENV: Final = "PDF_AIRLOCK_TEST_HOOKS"
# STRICT_LOADS_ENV=1 makes a lazy import or file open inside the sandbox fail loudly.
STRICT_LOADS_ENV: Final = "PDF_AIRLOCK_STRICT_LOADS"

# The sandbox self-test's job kind (``pdf-airlock self-test``): the child reports its layers.
PROBE_KIND: Final = "probe"

# Job kinds that exist only for the test suite: escape probes and fault injection
# (``pdf_airlock.worker.testing``). Every other job kind is a tool's name.
TEST_KINDS: Final[frozenset[str]] = frozenset({"escape", "fault"})

# The codes a job child may report in its error envelope.
WORKER_CODES: Final[frozenset[str]] = frozenset(
    {
        "not_a_pdf",
        "encrypted",
        "wrong_password",
        "malformed",
        "page_out_of_range",
        "memory_limit",
        "output_limit",
        "decompression_limit",
        "complexity_limit",
        "invalid_arguments",
        "timeout",
        "internal",
    }
)

# Sandbox layers in the order a job child applies them (``pdf_airlock.worker.sandbox``); the
# zygote reports each as available or not, and ``pdf-airlock self-test`` shows them.
SANDBOX_LAYERS: Final = (
    "process_group",
    "closed_fds",
    "env_allowlist",
    "unprivileged_uid",
    "namespaces",
    "rlimits",
    "no_new_privs",
    "landlock",
    "seccomp",
)

# Lines a job child may write on its result pipe before the envelope, each one JSON object
# ``{kind: value}`` on one line: ``progress`` (pages done, with ``total``) when the caller asked
# for progress; ``selection`` and ``page`` from a streamed read (a two-ended read).
LINE_KINDS: Final = ("progress", "selection", "page")

# The Markdown tool: the deepest heading level (``####``), and what joins two pages' Markdown in an
# answer (the job child counts it against ``max_chars``; the supervisor puts it there).
MARKDOWN_MAX_LEVEL: Final = 4
MARKDOWN_PAGE_SEPARATOR: Final = "\n\n"

# OCR's limits (``OcrLimits``): name -> (default, lowest, highest). The supervisor sets them
# (``--ocr-*`` flags) and sends them in every job's ``limits``; the job child applies them.
OCR_LIMITS: Final[Mapping[str, tuple[int, int, int]]] = MappingProxyType(
    {
        "dpi": (300, 72, 1200),  # the resolution a page is rendered at for Tesseract
        "min_dpi": (100, 36, 1200),  # below it a page is refused (``memory_limit``), not read
        "max_pixels": (16_000_000, 10_000, 200_000_000),  # pixel budget of one rendered page
        "page_timeout_ms": (20_000, 1, 600_000),  # Tesseract's deadline per page (``timeout``)
        "low_confidence": (60, 0, 100),  # mean word confidence under which a page gets a warning
    }
)


class ProtocolError(ValueError):
    """A message that does not have its shape (not JSON, a field missing or of the wrong type).
    Its text names the message and the field, never a value. ``job_id``: the message's ``id``
    when it had a readable one (the zygote refuses that job)."""

    def __init__(self, message: str, job_id: int | None = None) -> None:
        super().__init__(message)
        self.job_id = job_id


_T = TypeVar("_T")


def _is_int(value: object) -> bool:
    return type(value) is int


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _take(untrusted: Mapping[str, Any], name: str, kind: type[_T], what: str) -> _T:
    """Field ``name`` of message ``what``, of type ``kind`` (an ``int`` is never a ``bool``; a
    ``float`` may be written as an integer, never infinite or NaN)."""
    if name not in untrusted:
        raise ProtocolError(f"{what}: {name} is missing")
    value = untrusted[name]
    if kind is int:
        ok = _is_int(value)
    elif kind is float:
        ok = _is_number(value)
        value = float(value) if ok else value
    else:
        ok = isinstance(value, kind)
    if not ok:
        raise ProtocolError(f"{what}: {name} must be {kind.__name__}")
    return value  # type: ignore[no-any-return]


def _object(untrusted: object, what: str) -> dict[str, Any]:
    if not isinstance(untrusted, dict):
        raise ProtocolError(f"{what}: not a JSON object")
    return untrusted


def _parse(data: bytes, what: str) -> dict[str, Any]:
    try:
        untrusted = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # nested past the parser's depth
        raise ProtocolError(f"{what}: not JSON") from exc
    return _object(untrusted, what)


def _dump(message: Mapping[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


class OcrLimitError(ValueError):
    """An OCR limit out of its range (``bounds``), or ``min_dpi`` above ``dpi`` (``bounds`` None)."""

    def __init__(self, limit: str, bounds: tuple[int, int] | None) -> None:
        text = (
            f"OCR limit {limit} must be an integer from {bounds[0]} to {bounds[1]}"
            if bounds is not None
            else "OCR limit min_dpi must not exceed dpi"
        )
        super().__init__(text)
        self.limit = limit
        self.bounds = bounds


@dataclass(frozen=True, slots=True)
class OcrLimits:
    """OCR's limits for one job, each checked against its range in ``OCR_LIMITS`` when made. The
    defaults are Tesseract's best resolution for body text (300 dpi), a pixel budget that holds
    a Letter page at 300 dpi (8.4 Mpx) and nearly A3 (17.4 Mpx), 100 dpi as the least at which
    body text is still worth reading, 20 s a page and a warning under a mean confidence of 60."""

    dpi: int = OCR_LIMITS["dpi"][0]
    min_dpi: int = OCR_LIMITS["min_dpi"][0]
    max_pixels: int = OCR_LIMITS["max_pixels"][0]
    page_timeout_ms: int = OCR_LIMITS["page_timeout_ms"][0]
    low_confidence: int = OCR_LIMITS["low_confidence"][0]

    def __post_init__(self) -> None:
        for name, (_default, lowest, highest) in OCR_LIMITS.items():
            value = getattr(self, name)
            if not _is_int(value) or not lowest <= value <= highest:
                raise OcrLimitError(name, (lowest, highest))
        if self.min_dpi > self.dpi:
            raise OcrLimitError("min_dpi", None)

    def to_wire(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in OCR_LIMITS}

    @classmethod
    def from_wire(cls, untrusted: object) -> OcrLimits:
        fields = _object(untrusted, "ocr limits")
        if set(fields) - set(OCR_LIMITS):
            raise ProtocolError(f"ocr limits: only {', '.join(OCR_LIMITS)}")
        try:
            return cls(**fields)
        except OcrLimitError as exc:
            raise ProtocolError(f"ocr limits: {exc}") from exc


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-job resource budget, chosen by the supervisor (``Settings.job_limits``) and applied by
    the child to itself (``pdf_airlock.worker.sandbox``, OCR's in ``pdf_airlock.worker.pdf.ocr``).
    ``nice``: the child's scheduling niceness (0-19): untrusted parsing yields the CPU to the
    supervisor and its client. ``documents``: how many jobs one child may serve
    (``pdf_airlock.worker.child``); 1, a fresh child per document, unless the supervisor's
    ``--documents-per-child`` allows more. On the wire, ``ocr`` may be absent (its defaults)."""

    memory_bytes: int
    cpu_seconds: int
    max_input_bytes: int
    max_result_bytes: int
    nice: int = 0
    documents: int = 1
    ocr: OcrLimits = field(default_factory=OcrLimits)

    _INTS: ClassVar = ("memory_bytes", "cpu_seconds", "max_input_bytes", "max_result_bytes")
    _OPTIONAL_INTS: ClassVar = ("nice", "documents")

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {name: getattr(self, name) for name in (*self._INTS, *self._OPTIONAL_INTS)}
        wire["ocr"] = self.ocr.to_wire()
        return wire

    @classmethod
    def from_wire(cls, untrusted: object) -> Limits:
        fields = _object(untrusted, "limits")
        known = {*cls._INTS, *cls._OPTIONAL_INTS, "ocr"}
        if set(fields) - known:
            raise ProtocolError("limits: an unknown limit")
        values: dict[str, Any] = {name: _take(fields, name, int, "limits") for name in cls._INTS}
        values |= {name: _take(fields, name, int, "limits") for name in cls._OPTIONAL_INTS if name in fields}
        if "ocr" in fields:
            values["ocr"] = OcrLimits.from_wire(fields["ocr"])
        return cls(**values)


# -- the job protocol -----------------------------------------------------------------------
#
# Supervisor and zygote talk over a SOCK_SEQPACKET control socket, one JSON object with an
# ``op`` per datagram, fds by SCM_RIGHTS (``pdf_airlock.worker.zygote``: who sends what when). A
# ``Job`` goes with two fds (the input, the result pipe's write end) to the zygote, or straight
# to an idle spare or a resident child on its own socket. The child answers on the result pipe:
# optional ``LINE_KINDS`` lines, then one ``Reply``, then EOF.


class _Message:
    """A control message: ``op`` and its fields, one JSON object on the wire."""

    __slots__ = ()
    op: ClassVar[str]

    def wire_fields(self) -> dict[str, Any]:
        return {item.name: getattr(self, item.name) for item in dataclasses.fields(self)}  # type: ignore[arg-type]

    def to_wire(self) -> bytes:
        return _dump({"op": self.op, **self.wire_fields()})


@dataclass(frozen=True, slots=True)
class Job(_Message):
    """supervisor -> zygote, or -> a spare: run tool ``kind`` (or ``PROBE_KIND``, a
    ``TEST_KINDS``) on the input with ``args`` (the tool's own job arguments), under ``limits``
    and the ``sandbox`` request; the zygote kills it ``deadline_s`` after hand-over (stretched up
    to ``max_wall_s`` while a busy machine starves it). ``generation``: the supervisor's number for
    its current spec (spares of an older one are killed)."""

    op: ClassVar = "job"
    id: int
    kind: str
    args: dict[str, Any]
    limits: Limits
    sandbox: dict[str, Any]
    deadline_s: float
    max_wall_s: float
    generation: int = 0

    def wire_fields(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "args": self.args,
            "limits": self.limits.to_wire(),
            "sandbox": self.sandbox,
            "deadline_s": self.deadline_s,
            "max_wall_s": self.max_wall_s,
            "generation": self.generation,
        }

    @classmethod
    def from_fields(cls, fields: dict[str, Any]) -> Job:
        what = "job"
        raw_id = fields.get("id")
        try:
            deadline_s = _take(fields, "deadline_s", float, what)
            return cls(
                id=_take(fields, "id", int, what),
                kind=_take(fields, "kind", str, what),
                args=_take(fields, "args", dict, what),
                limits=Limits.from_wire(fields.get("limits")),
                sandbox=_take(fields, "sandbox", dict, what),
                deadline_s=deadline_s,
                max_wall_s=max(deadline_s, _take(fields, "max_wall_s", float, what)),
                generation=_take(fields, "generation", int, what),
            )
        except ProtocolError as exc:
            raise ProtocolError(str(exc), raw_id if _is_int(raw_id) else None) from exc

    @classmethod
    def from_wire(cls, data: bytes) -> Job:
        fields = _parse(data, "job")
        if fields.get("op") != cls.op:
            raise ProtocolError("job: op must be 'job'")
        return cls.from_fields(fields)


@dataclass(frozen=True, slots=True)
class Assigned(_Message):
    """supervisor -> zygote: it sent job ``id`` straight to the idle spare or resident ``pid``;
    the job's deadlines run from now."""

    op: ClassVar = "assigned"
    id: int
    pid: int
    deadline_s: float
    max_wall_s: float


@dataclass(frozen=True, slots=True)
class Kill(_Message):
    """supervisor -> zygote: kill job ``id``'s child (cancelled, or its answer is not needed)."""

    op: ClassVar = "kill"
    id: int


@dataclass(frozen=True, slots=True)
class Released(_Message):
    """supervisor -> zygote: job ``id``'s child answered and stays for another job of its input,
    at most ``idle_s`` idle."""

    op: ClassVar = "released"
    id: int
    idle_s: float


@dataclass(frozen=True, slots=True)
class Drop(_Message):
    """supervisor -> zygote: it closed resident ``pid``'s socket: kill it."""

    op: ClassVar = "drop"
    pid: int


@dataclass(frozen=True, slots=True)
class Retire(_Message):
    """supervisor -> zygote: job ``id``'s child answered and gets no other job: it must exit
    within ``grace_s``."""

    op: ClassVar = "retire"
    id: int
    grace_s: float


@dataclass(frozen=True, slots=True)
class Ready(_Message):
    """zygote -> supervisor, once: warmed in ``warm_ms``; what its kernel allows of each
    probed sandbox layer (``layers``) and the job ``kinds`` it runs."""

    op: ClassVar = "ready"
    pid: int
    warm_ms: float
    layers: dict[str, str]
    kinds: tuple[str, ...]

    @classmethod
    def from_fields(cls, fields: dict[str, Any]) -> Ready:
        layers = _take(fields, "layers", dict, "ready")
        kinds = _take(fields, "kinds", list, "ready")
        if not all(isinstance(value, str) for value in (*layers.values(), *kinds)):
            raise ProtocolError("ready: layers and kinds must be strings")
        pid, warm_ms = _take(fields, "pid", int, "ready"), _take(fields, "warm_ms", float, "ready")
        return cls(pid, warm_ms, dict(layers), tuple(kinds))

    def wire_fields(self) -> dict[str, Any]:
        return {"pid": self.pid, "warm_ms": self.warm_ms, "layers": self.layers, "kinds": list(self.kinds)}


@dataclass(frozen=True, slots=True)
class Spare(_Message):
    """zygote -> supervisor, with the spare's socket: an idle spare ``pid`` made for the spec of
    ``generation``."""

    op: ClassVar = "spare"
    pid: int
    generation: int


@dataclass(frozen=True, slots=True)
class Started(_Message):
    """zygote -> supervisor: job ``id`` runs on child ``pid``; the zygote owns the child now."""

    op: ClassVar = "started"
    id: int
    pid: int


@dataclass(frozen=True, slots=True)
class Refused(_Message):
    """zygote -> supervisor: job ``id`` is of a kind it does not run (or malformed): it never ran."""

    op: ClassVar = "refused"
    id: int


@dataclass(frozen=True, slots=True)
class Lost(_Message):
    """zygote -> supervisor: an ``Assigned`` named a pid it does not know: the job never ran."""

    op: ClassVar = "lost"
    id: int


@dataclass(frozen=True, slots=True)
class Exit(_Message):
    """zygote -> supervisor: job ``id``'s child was reaped with wait ``status``; whether the
    zygote killed it at its deadline (``deadline_hit``) or on ``Kill`` (``killed``), its wall time
    and its ``rusage`` (``utime``, ``stime`` in seconds, ``maxrss_kb``, and for a child killed by
    a signal ``base_rss_kb``: what it inherited from the zygote)."""

    op: ClassVar = "exit"
    id: int
    status: int
    deadline_hit: bool
    killed: bool
    wall_ms: float
    rusage: dict[str, float]

    @classmethod
    def from_fields(cls, fields: dict[str, Any]) -> Exit:
        what = "exit"
        rusage = _take(fields, "rusage", dict, what)
        if not all(isinstance(key, str) and _is_number(value) for key, value in rusage.items()):
            raise ProtocolError("exit: rusage must map names to numbers")
        return cls(
            id=_take(fields, "id", int, what),
            status=_take(fields, "status", int, what),
            deadline_hit=_take(fields, "deadline_hit", bool, what),
            killed=_take(fields, "killed", bool, what),
            wall_ms=_take(fields, "wall_ms", float, what),
            rusage={key: float(value) for key, value in rusage.items()},
        )


Order = Job | Assigned | Kill | Released | Drop | Retire
Report = Ready | Spare | Started | Refused | Lost | Exit

# Messages whose fields are all ints and floats: read and written field by field.
_SIMPLE: Final[Mapping[str, type[Any]]] = MappingProxyType(
    {cls.op: cls for cls in (Assigned, Kill, Released, Drop, Retire, Spare, Started, Refused, Lost)}
)
_ORDERS: Final = frozenset({"job", "assigned", "kill", "released", "drop", "retire"})
_REPORTS: Final = frozenset({"ready", "spare", "started", "refused", "lost", "exit"})


def _simple_from_fields(cls: type[_T], untrusted: dict[str, Any]) -> _T:
    what: str = getattr(cls, "op")  # noqa: B009 - every class in _SIMPLE has one
    kinds = {item.name: (float if item.name.endswith("_s") else int) for item in dataclasses.fields(cls)}  # type: ignore[arg-type]
    return cls(**{name: _take(untrusted, name, kind, what) for name, kind in kinds.items()})


def _decode(data: bytes, ops: frozenset[str], what: str) -> Any:
    fields = _parse(data, what)
    op = fields.get("op")
    if not isinstance(op, str) or op not in ops:
        raise ProtocolError(f"{what}: an unknown op")
    if op == "job":
        return Job.from_fields(fields)
    if op == "ready":
        return Ready.from_fields(fields)
    if op == "exit":
        return Exit.from_fields(fields)
    return _simple_from_fields(_SIMPLE[op], fields)


def decode_order(data: bytes) -> Order:
    """A datagram from the supervisor (read by the zygote), checked; else ``ProtocolError``."""
    result: Order = _decode(data, _ORDERS, "order")
    return result


def decode_report(data: bytes) -> Report:
    """A datagram from the zygote (read by the supervisor), checked; else ``ProtocolError``."""
    result: Report = _decode(data, _REPORTS, "report")
    return result


# -- a job child's reply --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Answer:
    """A job child's result: the tool's result object (still untrusted until the tool's model
    validates it). On the wire ``{"ok": true, "result": {...}}``."""

    result: dict[str, Any]
    ok: ClassVar = True

    def wire(self) -> dict[str, Any]:
        return {"ok": True, "result": self.result}


@dataclass(frozen=True, slots=True)
class Failure:
    """A job child's typed error (``code`` one of ``WORKER_CODES``); on the wire
    ``{"ok": false, "error": {"code", "message", "details"}}``. Read from a child, only the types
    are checked here: the supervisor bounds, sanitises and maps the code itself."""

    code: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)
    ok: ClassVar = False

    def wire(self) -> dict[str, Any]:
        return {"ok": False, "error": {"code": self.code, "message": self.message, "details": self.details}}

    @classmethod
    def of(cls, error: WorkerError) -> Failure:
        return cls(error.code, error.message, dict(error.details))


Reply = Answer | Failure


def decode_reply(untrusted: object) -> Reply:
    """A child's parsed reply object, checked for shape only (sizes are the reader's to bound);
    else ``ProtocolError`` naming what is wrong: ``envelope``, ``result`` or ``error``."""
    if not isinstance(untrusted, dict) or not isinstance(untrusted.get("ok"), bool):
        raise ProtocolError("envelope: not an object with a boolean ok")
    if untrusted["ok"]:
        untrusted_result = untrusted.get("result")
        if not isinstance(untrusted_result, dict):
            raise ProtocolError("result: missing, or not an object")
        return Answer(untrusted_result)
    untrusted_error = untrusted.get("error")
    if not isinstance(untrusted_error, dict):
        raise ProtocolError("error: not an object")
    untrusted_details = untrusted_error.get("details", {})
    code, message = untrusted_error.get("code"), untrusted_error.get("message")
    if not isinstance(code, str) or not isinstance(message, str) or not isinstance(untrusted_details, dict):
        raise ProtocolError("error: code and message must be strings, details an object")
    return Failure(code, message, untrusted_details)


class WorkerError(Exception):
    """A failure the job child reports as a typed error instead of a result."""

    def __init__(self, code: str, message: str, details: dict[str, object] | None = None) -> None:
        if code not in WORKER_CODES:
            raise ValueError(f"unknown worker error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}
