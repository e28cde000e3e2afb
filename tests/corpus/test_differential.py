"""The sandbox changes no tool's answer: bench/robustness/differential.py over a small generated corpus.

Every tool's job (``pdf_read`` with both engines) runs in a real sandboxed job child and in this
process through the job child's own code; the two outcomes must be identical, with no
normalisation. The corpus is one document per class of real-world PDF that once read wrong in
the sandbox (tests/realworld.py) plus the suite's generators (tests/pdfs.py). Strict loads are on
(tests/conftest.py): a lazy load the warm-up missed fails the sandbox job as ``internal``.
"""

from __future__ import annotations

from collections.abc import Callable

import hidden_pdfs
import pdfs
import pytest
import realworld
from conftest import HELLO_PAGES, TEST_PASSWORD

from bench.robustness import differential

pytestmark = pytest.mark.anyio

CORPUS: dict[str, tuple[Callable[[], bytes], str | None]] = {
    "to-unicode.pdf": (realworld.to_unicode_pdf, None),
    "cjk.pdf": (realworld.predefined_cjk_pdf, None),
    "not-embedded.pdf": (realworld.not_embedded_fonts_pdf, None),
    "form-xobject.pdf": (realworld.form_xobject_pdf, None),
    "hyphenated.pdf": (realworld.hyphenated_pdf, None),
    "text.pdf": (lambda: pdfs.text_pdf(HELLO_PAGES), None),
    "columns.pdf": (lambda: pdfs.two_column_pdf(["left A", "left B"], ["right A", "right B"]), None),
    "encrypted.pdf": (lambda: pdfs.encrypted_pdf(TEST_PASSWORD, "Encrypted body text"), TEST_PASSWORD),
    "images.pdf": (pdfs.images_pdf, None),
    "interactive.pdf": (pdfs.interactive_pdf, None),
    "structured.pdf": (pdfs.structured_pdf, None),
    "hidden.pdf": (pdfs.hidden_text_pdf, None),
    "cjk-on-a-box.pdf": (hidden_pdfs.KEPT["cjk_on_a_box"].build, None),
}
# Text each document's pdf_read must contain on both sides: the comparison is of real answers.
EXPECTED_TEXT = {
    "cjk-on-a-box.pdf": realworld.CJK_TEXT,
    "cjk.pdf": realworld.CJK_TEXT,
    "not-embedded.pdf": "Helvetica, not embedded",
    "form-xobject.pdf": realworld.FORM_TEXT,
    "text.pdf": "Hello from page one.",
    "encrypted.pdf": "Encrypted body text",
}


async def test_sandbox_and_in_process_give_identical_answers() -> None:
    settings = differential.sandbox_settings(jobs=2)
    results: dict[str, list[differential.JobRecord]] = {}
    async with differential.sandbox_pool(settings) as pool:
        in_process = differential.InProcess(settings, guard_s=None)
        for name, (build, password) in CORPUS.items():
            jobs = differential.jobs_for(password)
            results[name] = await differential.diff_document(pool, in_process, settings, build(), jobs)
    assert {record.job for records in results.values() for record in records} == {
        job.name for job in differential.JOBS
    }
    for name, records in results.items():
        for record in records:
            where = (name, record.job)
            assert record.differences == [], where
            assert record.bugs == [], where
            assert record.sandbox.code is None and record.in_process.code is None, where
            assert record.sandbox.result == record.in_process.result, where
        markdown = next(r for r in records if r.job == "pdf_markdown")
        assert markdown.sandbox.result is not None
        text = "".join(page["text"] for page in markdown.sandbox.result["pages"])
        assert EXPECTED_TEXT.get(name, "") in " ".join(text.split()), (name, "pdf_markdown")
        reads = [r for r in records if r.job.startswith("pdf_read/")]
        for record in reads:
            assert record.sandbox.result is not None
            text = "".join(page["text"] for page in record.sandbox.result["pages"])
            assert EXPECTED_TEXT.get(name, "") in text, (name, record.job)
    report = differential.withheld(results, at_least=1)
    assert "48 characters of" in report and "in 1 document(s)" in report, report
    assert (
        "- hidden.pdf: 48 chars; invisible_mode 1, outside_crop_box 1, same_colour_as_background 1" in report
    )


async def test_repair_warnings_are_the_same_in_and_out_of_the_sandbox() -> None:
    """A stream keyword followed by a lone CR: qpdf repairs it with a warning naming the input."""
    damaged = pdfs.text_pdf(["CR only"]).replace(b"stream\n", b"stream\r", 1)
    settings = differential.sandbox_settings(jobs=1)
    async with differential.sandbox_pool(settings) as pool:
        in_process = differential.InProcess(settings, guard_s=None)
        jobs = differential.jobs_for(tools={"pdf_info"})
        [record] = await differential.diff_document(pool, in_process, settings, damaged, jobs)
    assert record.sandbox.result is not None
    assert record.sandbox.result["repair"]["warning_count"] == 1
    assert record.differences == []
    # qpdf names its input by the stream's repr, a heap address the same in every child of a
    # zygote: never shown (it would tell a client the zygote's heap layout).
    assert "0x" not in record.sandbox.result["repair"]["warnings"][0]


def _read(texts: list[str]) -> differential.Side:
    pages = [{"page": n, "text": text, "offset": 0, "complete": True} for n, text in enumerate(texts, 1)]
    return differential.Side(result={"engine": "fast", "pages": pages, "warnings": []}, wall_ms=1.0)


def test_each_class_of_difference_is_named() -> None:
    """The classes the harness reports, from outcomes built by hand."""
    same = differential.compare(_read(["a", "b"]), _read(["a", "b"]))
    assert same == []
    [text] = differential.compare(_read(["a", "(cid:12)(cid:13)"]), _read(["a", "\ufb01x"]))
    assert text.cls == "text differs"
    assert "(cid:N) 2/0" in text.detail and "ligatures 0/1" in text.detail and "first page 2" in text.detail
    warned = _read(["a"])
    assert warned.result is not None
    warned.result["warnings"] = ["page 1 failed"]
    [field] = differential.compare(warned, _read(["a"]))
    assert field.cls == "field differs: warnings"
    lazy = differential.Side(code="internal", message="lazy load", details={"lazy_load": "import x"})
    [failed] = differential.compare(lazy, _read(["a"]))
    assert failed.cls == "ok vs error (internal in sandbox)"
    assert [bug.cls for bug in differential.bugs(lazy, _read(["a"]))] == ["bug: internal in sandbox"]
    [limit] = differential.compare(differential.Side(code="memory_limit"), _read(["a"]))
    assert limit.cls == "limit only in sandbox"
    [codes] = differential.compare(differential.Side(code="malformed"), differential.Side(code="encrypted"))
    assert codes.cls == "error code differs"
    assert (
        differential.compare(differential.Side(code="encrypted"), differential.Side(code="encrypted")) == []
    )
