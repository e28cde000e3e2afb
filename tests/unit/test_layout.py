"""The layout keeps its promises: a tool is one server module plus one worker module, and the
registries that list them are derived, complete and in step.

- every server tool module (``pdf_airlock.server.tools.<name>`` with a ``TOOL``) has the parser
  ``pdf_airlock.worker.parsers.<name>`` and the other way round, under the same name;
- the zygote's job table is exactly the parsers' kinds plus the self-test probe; the test-only
  kinds join it only with the test hooks on;
- every parser declares its kind and warms itself up, and every paged tool says how its parts
  join;
- pyproject.toml lists every package under both source roots (the wheel in the image is built
  from that list).
"""

from __future__ import annotations

import tomllib

from conftest import PROJECT

from pdf_airlock.server.tools.registry import TOOLS, tool_modules
from pdf_airlock.worker import zygote
from pdf_airlock.worker.contract import PROBE_KIND, TEST_KINDS
from pdf_airlock.worker.parsers import TOOL_KINDS, get_parser, parser_modules


def test_server_tools_and_worker_parsers_match_one_to_one() -> None:
    tools = tool_modules()
    assert tools, "no tool modules found"
    assert {f"pdf_{name}": spec.name for name, spec in tools.items()} == {name: name for name in TOOL_KINDS}
    assert set(TOOLS) == set(TOOL_KINDS)


def test_every_parser_declares_its_kind_and_warms_up() -> None:
    for module in parser_modules():
        assert f"pdf_{module.__name__.rsplit('.', 1)[1]}" == module.KIND
        assert callable(module.run) and callable(module.warm_up)


def test_tools_list_in_rank_order_with_distinct_ranks() -> None:
    ranks = [spec.rank for spec in TOOLS.values()]
    assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks)
    assert list(TOOLS)[:2] == ["pdf_info", "pdf_read"]


def test_every_paged_tool_says_how_its_parts_join() -> None:
    for spec in TOOLS.values():
        fields = spec.output_model.model_fields
        assert (spec.paged is not None) == ("cursor" in fields), spec.name
        if spec.paged is not None:
            assert spec.paged.items in fields
            assert all(name in fields for name in (*spec.paged.summed, *spec.paged.flags))


def test_job_table_is_the_parsers_plus_the_probe_and_test_kinds_stay_out() -> None:
    assert frozenset(TOOL_KINDS) | {PROBE_KIND} == zygote._KINDS
    assert not zygote._KINDS & TEST_KINDS
    for kind in TEST_KINDS:  # they exist, for a zygote started with the test hooks
        assert callable(get_parser(kind))


def test_pyproject_lists_every_package() -> None:
    config = tomllib.loads((PROJECT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    roots = config["tool"]["setuptools"]["package-dir"]
    found = set()
    for package, folder in roots.items():
        for init in (PROJECT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(PROJECT / folder)
            found.add(".".join([package, *relative.parts]))
    assert listed == found
    assert not (PROJECT / "server" / "pdf_airlock" / "__init__.py").exists()  # a PEP 420 namespace
    assert not (PROJECT / "worker" / "pdf_airlock" / "__init__.py").exists()
