"""JavaScript where ``pdf_security`` once did not look, each in a generated document read by a
real job child: every one must rate the document high, so the high-risk approval is asked.

The places: an outline item's action, the 201st annotation of a page, the 9th action of a /Next
chain, a form field's own /AA (on the field dictionary, not its widget). Past a walk's bound the
triage says so and rates high ("not every action could be inspected"); a /Next chain that loops
or an outline that loops ends the walk instead of the child.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pdfs
import pikepdf
import pytest
from conftest import connect

pytestmark = pytest.mark.anyio

_SCRIPT = "app.alert('hidden')"
_INCOMPLETE = "not every action could be inspected"


def _base() -> pikepdf.Pdf:
    return pikepdf.open(io.BytesIO(pdfs.text_pdf(["A document with a hidden script"])))


def _javascript(pdf: pikepdf.Pdf) -> pikepdf.Object:
    return pdf.make_indirect(pikepdf.Dictionary(S=pikepdf.Name.JavaScript, JS=pikepdf.String(_SCRIPT)))


def _saved(pdf: pikepdf.Pdf) -> bytes:
    out = io.BytesIO()
    pdf.save(out)
    return out.getvalue()


def outline_item() -> bytes:
    pdf = _base()
    outlines = pdf.make_indirect(pikepdf.Dictionary(Type=pikepdf.Name.Outlines))
    first = pdf.make_indirect(pikepdf.Dictionary(Title="Chapter", Parent=outlines, A=_javascript(pdf)))
    outlines.First = outlines.Last = first
    outlines.Count = 1
    pdf.Root.Outlines = outlines
    return _saved(pdf)


def annotation_201() -> bytes:
    pdf = _base()
    annots = [
        pdf.make_indirect(
            pikepdf.Dictionary(Type=pikepdf.Name.Annot, Subtype=pikepdf.Name.Text, Rect=[0, 0, 9, 9])
        )
        for _ in range(200)
    ]
    link = pikepdf.Dictionary(Type=pikepdf.Name.Annot, Subtype=pikepdf.Name.Link, Rect=[0, 0, 99, 99])
    link.A = _javascript(pdf)
    annots.append(pdf.make_indirect(link))
    pdf.pages[0].obj.Annots = pdf.make_indirect(pikepdf.Array(annots))
    return _saved(pdf)


def next_chain_9() -> bytes:
    pdf = _base()
    action = _javascript(pdf)
    for _ in range(9):  # eight harmless actions before it: the script is the chain's 10th link
        action = pdf.make_indirect(
            pikepdf.Dictionary(S=pikepdf.Name.URI, URI="https://example.invalid/", Next=action)
        )
    pdf.Root.OpenAction = action
    return _saved(pdf)


def field_own_aa() -> bytes:
    pdf = _base()
    widget = pdf.make_indirect(
        pikepdf.Dictionary(Type=pikepdf.Name.Annot, Subtype=pikepdf.Name.Widget, Rect=[72, 600, 272, 620])
    )
    field = pdf.make_indirect(
        pikepdf.Dictionary(
            FT=pikepdf.Name.Tx, T="total", Kids=[widget], AA=pikepdf.Dictionary(C=_javascript(pdf))
        )
    )
    widget.Parent = field
    widget.P = pdf.pages[0].obj
    pdf.pages[0].obj.Annots = pdf.make_indirect(pikepdf.Array([widget]))
    pdf.Root.AcroForm = pikepdf.Dictionary(Fields=[field])
    return _saved(pdf)


def fields_too_deep() -> bytes:
    """A field tree 70 levels deep (the walk's bound is 64), the script on the deepest field."""
    pdf = _base()
    field = pdf.make_indirect(
        pikepdf.Dictionary(FT=pikepdf.Name.Tx, T="leaf", AA=pikepdf.Dictionary(K=_javascript(pdf)))
    )
    for level in range(70):
        field = pdf.make_indirect(pikepdf.Dictionary(T=f"l{level}", Kids=[field]))
    pdf.Root.AcroForm = pikepdf.Dictionary(Fields=[field])
    return _saved(pdf)


def next_loop() -> bytes:
    pdf = _base()
    first = _javascript(pdf)
    second = pdf.make_indirect(
        pikepdf.Dictionary(S=pikepdf.Name.URI, URI="https://example.invalid/", Next=first)
    )
    first.Next = pikepdf.Array([second, second])
    pdf.Root.OpenAction = first
    return _saved(pdf)


def outline_loop() -> bytes:
    pdf = _base()
    outlines = pdf.make_indirect(pikepdf.Dictionary(Type=pikepdf.Name.Outlines))
    parent = pdf.make_indirect(pikepdf.Dictionary(Title="Up", Parent=outlines))
    child = pdf.make_indirect(
        pikepdf.Dictionary(Title="Down", Parent=parent, A=_javascript(pdf), First=parent)
    )
    parent.First = child
    parent.Next = parent
    outlines.First = outlines.Last = parent
    pdf.Root.Outlines = outlines
    return _saved(pdf)


TRICKS: dict[str, Callable[[], bytes]] = {
    "outline_item": outline_item,
    "annotation_201": annotation_201,
    "next_chain_9": next_chain_9,
    "field_own_aa": field_own_aa,
}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hidden-actions")
    for name, make in [
        *TRICKS.items(),
        ("fields_too_deep", fields_too_deep),
        ("next_loop", next_loop),
        ("outline_loop", outline_loop),
    ]:
        pdfs.write(folder / f"{name}.pdf", make())
    return folder


async def _triage(root: Path, *names: str) -> dict[str, dict[str, Any]]:
    async with connect(root) as client:
        found = {}
        for name in names:
            result = await client.call_tool("pdf_security", {"path": f"{name}.pdf"})
            assert result.is_error is False, result.content
            found[name] = result.structured_content
    return found


async def test_each_hidden_script_rates_high(root: Path) -> None:
    found = await _triage(root, *TRICKS)
    where = {
        "outline_item": "outline item 'Chapter'",
        "annotation_201": "page 1 Link annotation",
        "next_chain_9": "document open",
        "field_own_aa": "form field 'total' C",
    }
    for name, triage in found.items():
        assert triage["risk"] == "high", name
        assert triage["actions"]["javascript"] == 1, name
        assert "1 javascript action(s)" in triage["reasons"], name
        assert {"where": where[name], "action": "javascript", "detail": f"{len(_SCRIPT)} chars"} in triage[
            "locations"
        ], name
    assert found["next_chain_9"]["actions"] == {"javascript": 1, "uri": 9}


async def test_past_a_walk_bound_the_risk_is_high_with_its_reason(root: Path) -> None:
    triage = (await _triage(root, "fields_too_deep"))["fields_too_deep"]
    assert triage["risk"] == "high"
    assert triage["actions"] == {}  # the script lies past the bound: not seen, and said so
    assert triage["reasons"] == [f"{_INCOMPLETE} (form fields nested deeper than 64 levels)"]


async def test_loops_end_the_walk_and_count_each_action_once(root: Path) -> None:
    found = await _triage(root, "next_loop", "outline_loop")
    assert found["next_loop"]["actions"] == {"javascript": 1, "uri": 1}
    assert found["outline_loop"]["actions"] == {"javascript": 1}
    for triage in found.values():
        assert triage["risk"] == "high" and not any(_INCOMPLETE in reason for reason in triage["reasons"])
