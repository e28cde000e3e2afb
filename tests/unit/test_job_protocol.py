"""The job protocol's messages (``pdf_airlock.worker.contract``): each reads back what it wrote,
and a message without its shape is a ``ProtocolError``, never a ``KeyError`` or a ``TypeError``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pdf_airlock.worker.contract import (
    Answer,
    Assigned,
    Drop,
    Exit,
    Failure,
    Job,
    Kill,
    Limits,
    Lost,
    OcrLimits,
    ProtocolError,
    Ready,
    Refused,
    Released,
    Retire,
    Spare,
    Started,
    decode_order,
    decode_reply,
    decode_report,
)

LIMITS = Limits(memory_bytes=1 << 28, cpu_seconds=5, max_input_bytes=1 << 20, max_result_bytes=1 << 20)
JOB = Job(3, "pdf_read", {"max_chars": 10, "pages": None}, LIMITS, {"require": []}, 2.0, 4.0, 1)
ORDERS = [JOB, Assigned(3, 41, 2.0, 4.0), Kill(3), Released(3, 30.0), Drop(41), Retire(3, 0.5)]
REPORTS = [
    Ready(40, 812.5, {"seccomp": "available"}, ("pdf_read", "probe")),
    Spare(41, 1),
    Started(3, 41),
    Refused(3),
    Lost(3),
    Exit(3, 0, False, False, 12.5, {"utime": 0.01, "stime": 0.0, "maxrss_kb": 2048.0}),
]


@pytest.mark.parametrize("message", ORDERS, ids=lambda message: message.op)
def test_an_order_reads_back_what_it_wrote(message: Any) -> None:
    assert decode_order(message.to_wire()) == message


@pytest.mark.parametrize("message", REPORTS, ids=lambda message: message.op)
def test_a_report_reads_back_what_it_wrote(message: Any) -> None:
    assert decode_report(message.to_wire()) == message


def test_the_wire_is_one_json_object_with_the_fields_by_name() -> None:
    exit_ = json.loads(REPORTS[-1].to_wire())
    assert exit_ == {
        "op": "exit",
        "id": 3,
        "status": 0,
        "deadline_hit": False,
        "killed": False,
        "wall_ms": 12.5,
        "rusage": {"utime": 0.01, "stime": 0.0, "maxrss_kb": 2048.0},
    }
    job = json.loads(JOB.to_wire())
    assert job["limits"]["ocr"] == OcrLimits().to_wire()
    assert list(job) == [
        "op",
        "id",
        "kind",
        "args",
        "limits",
        "sandbox",
        "deadline_s",
        "max_wall_s",
        "generation",
    ]


def _broken(message: Any) -> list[bytes]:
    """The message with each field in turn missing, and then of a wrong type."""
    fields = json.loads(message.to_wire())
    variants = []
    for name in fields:
        if name == "op":
            continue
        variants.append(json.dumps({key: value for key, value in fields.items() if key != name}).encode())
        variants.append(json.dumps(fields | {name: "x" if not isinstance(fields[name], str) else 1}).encode())
    return variants


@pytest.mark.parametrize("message", ORDERS, ids=lambda message: message.op)
def test_an_order_without_its_shape_is_a_protocol_error(message: Any) -> None:
    for untrusted in _broken(message):
        with pytest.raises(ProtocolError):
            decode_order(untrusted)


@pytest.mark.parametrize("message", REPORTS, ids=lambda message: message.op)
def test_a_report_without_its_shape_is_a_protocol_error(message: Any) -> None:
    for untrusted in _broken(message):
        with pytest.raises(ProtocolError):
            decode_report(untrusted)


@pytest.mark.parametrize(
    "untrusted",
    [
        b"",
        b"\xff",
        b"[]",
        b"[" * 100_000,
        b"null",
        b'{"op": "shutdown"}',
        b'{"op": 1}',
        b'{"op": "exit", "id": true, "status": 0, "deadline_hit": false, "killed": false, '
        b'"wall_ms": 1, "rusage": {}}',
        b'{"op": "exit", "id": 1, "status": 0, "deadline_hit": 0, "killed": false, "wall_ms": 1, '
        b'"rusage": {}}',
        b'{"op": "exit", "id": 1, "status": 0, "deadline_hit": false, "killed": false, "wall_ms": 1, '
        b'"rusage": {"utime": "a lot"}}',
        b'{"op": "ready", "pid": 1, "warm_ms": 1, "layers": {"seccomp": 1}, "kinds": []}',
        b'{"op": "ready", "pid": 1, "warm_ms": 1, "layers": {}, "kinds": [1]}',
        b'{"op": "started", "id": 1, "pid": 1.5}',
        b'{"op": "job", "id": 1}',
    ],
)
def test_a_hostile_report_is_a_protocol_error(untrusted: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode_report(untrusted)


def test_a_job_sent_to_the_zygote_is_not_a_report_and_an_order_is_not_a_job() -> None:
    with pytest.raises(ProtocolError):
        decode_report(JOB.to_wire())
    with pytest.raises(ProtocolError):
        Job.from_wire(Kill(3).to_wire())


def test_a_job_without_its_shape_names_its_id_for_the_refusal() -> None:
    fields = json.loads(JOB.to_wire())
    fields["limits"]["memory_bytes"] = "lots"
    with pytest.raises(ProtocolError) as refused:
        decode_order(json.dumps(fields).encode())
    assert refused.value.job_id == 3
    fields["limits"] = {
        "memory_bytes": 1,
        "cpu_seconds": 1,
        "max_input_bytes": 1,
        "max_result_bytes": 1,
        "x": 1,
    }
    with pytest.raises(ProtocolError):
        decode_order(json.dumps(fields).encode())


def test_a_job_wall_limit_is_never_under_its_deadline() -> None:
    fields = json.loads(JOB.to_wire()) | {"deadline_s": 5, "max_wall_s": 1}
    job = decode_order(json.dumps(fields).encode())
    assert isinstance(job, Job)
    assert (job.deadline_s, job.max_wall_s) == (5.0, 5.0)


@pytest.mark.parametrize(
    ("untrusted", "reply"),
    [
        ({"ok": True, "result": {"pages": []}}, Answer({"pages": []})),
        ({"ok": False, "error": {"code": "malformed", "message": "m"}}, Failure("malformed", "m")),
        (
            {"ok": False, "error": {"code": "x", "message": "m", "details": {"a": 1}}},
            Failure("x", "m", {"a": 1}),
        ),
    ],
)
def test_a_reply_reads_back(untrusted: dict[str, Any], reply: Any) -> None:
    assert decode_reply(untrusted) == reply
    assert decode_reply(json.loads(json.dumps(reply.wire()))) == reply


@pytest.mark.parametrize(
    ("untrusted", "part"),
    [
        ([], "envelope"),
        ({"ok": 1}, "envelope"),
        ({"ok": True}, "result"),
        ({"ok": True, "result": [1]}, "result"),
        ({"ok": False}, "error"),
        ({"ok": False, "error": "boom"}, "error"),
        ({"ok": False, "error": {"code": 7, "message": "m"}}, "error"),
        ({"ok": False, "error": {"code": "internal"}}, "error"),
        ({"ok": False, "error": {"code": "internal", "message": "m", "details": [1]}}, "error"),
    ],
)
def test_a_hostile_reply_is_a_protocol_error_naming_its_part(untrusted: object, part: str) -> None:
    with pytest.raises(ProtocolError) as refused:
        decode_reply(untrusted)
    assert str(refused.value).startswith(f"{part}:")
