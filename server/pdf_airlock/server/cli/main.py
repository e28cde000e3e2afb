"""Command line: ``pdf-airlock [serve]``, ``pdf-airlock call TOOL --json ARGS``.

``serve`` (the default) runs the MCP stdio server. ``call`` runs one tool through the same
supervisor, pool and sandbox and prints the ``CallToolResult`` as JSON on stdout; its exit
status is 0 on success, 1 on a tool error, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any, NoReturn

import anyio

from pdf_airlock.server import __version__
from pdf_airlock.server.config import BATCH_PROGRESS_MODES, DEFAULTS, MIB, Settings
from pdf_airlock.worker.contract import OCR_LIMITS, SANDBOX_LAYERS, OcrLimitError, OcrLimits

__all__ = ["main"]

_ENV_PREFIX = "PDF_AIRLOCK_"
_MAX_NICE = 19
_MS_PER_S = 1000
# OCR's flags: flag -> (the limit in ``contract.OCR_LIMITS``, how the flag's value is read, the
# factor from it to the limit's unit, help)
_OCR_FLAGS: dict[str, tuple[str, type[int] | type[float], int, str]] = {
    "--ocr-dpi": ("dpi", int, 1, "resolution a page is rendered at for OCR"),
    "--ocr-min-dpi": ("min_dpi", int, 1, "a page that fits --ocr-max-pixels only below this is refused"),
    "--ocr-max-pixels": ("max_pixels", int, 1, "pixel budget of one page rendered for OCR"),
    "--ocr-page-timeout": ("page_timeout_ms", float, _MS_PER_S, "seconds OCR may spend on one page"),
    "--ocr-low-confidence": (
        "low_confidence",
        int,
        1,
        "mean OCR confidence under which a page gets a warning",
    ),
}


# The protocol's limits: flag -> (the ``Settings`` field, its default, (lowest, highest), how the
# flag's value is read, the factor from it to the field's unit, help). Defaults and ranges are
# ``DEFAULTS``'s.
_PROTOCOL_FLAGS: dict[str, tuple[str, float, tuple[float, float], type[int] | type[float], int, str]] = {
    "--approval-state-ttl": (
        "approval_state_ttl_s",
        DEFAULTS.approval_state_ttl_s,
        DEFAULTS.approval_state_ttl_range,
        float,
        1,
        "seconds a 2026-07-28 client has to answer an approval question (its signed requestState)",
    ),
    "--resource-ttl": (
        "resource_ttl_s",
        DEFAULTS.resource_ttl_s,
        DEFAULTS.resource_ttl_range,
        float,
        1,
        "seconds an answer delivered as a resource (deliver: resource) can be read",
    ),
    "--resource-mb": (
        "resource_bytes",
        DEFAULTS.resource_mb,
        DEFAULTS.resource_mb_range,
        int,
        MIB,
        "memory for answers delivered as resources (0: the deliver option is refused)",
    ),
    "--resource-disk-mb": (
        "resource_disk_bytes",
        DEFAULTS.resource_disk_mb,
        DEFAULTS.resource_disk_mb_range,
        int,
        MIB,
        "with --cache-dir: disk for answers delivered as resources, in its resources/ folder",
    ),
    "--resource-part-chars": (
        "resource_part_chars",
        DEFAULTS.resource_part_chars,
        DEFAULTS.resource_part_chars_range,
        int,
        1,
        "characters of a delivered answer one resources/read returns (longer ones are read in parts)",
    ),
}


def _env(name: str, default: Any) -> Any:
    return os.environ.get(_ENV_PREFIX + name, default)


def _add_settings_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        action="append",
        type=Path,
        help="directory documents may be read from (repeatable; default: the working directory; "
        "env PDF_AIRLOCK_ROOTS, colon-separated)",
    )
    parser.add_argument("--max-file-mb", type=int, default=int(_env("MAX_FILE_MB", DEFAULTS.max_file_mb)))
    parser.add_argument(
        "--timeout",
        type=float,
        default=float(_env("TIMEOUT", DEFAULTS.timeout_s)),
        help="wall seconds per job (on a busy machine, see --busy-stretch)",
    )
    parser.add_argument(
        "--busy-stretch",
        type=float,
        default=float(_env("BUSY_STRETCH", DEFAULTS.busy_stretch)),
        help="while a job gets less than half a CPU because the machine is busy, its --timeout "
        "is extended, up to this multiple of it (1: never)",
    )
    parser.add_argument(
        "--cpu-seconds", type=int, default=None, help="CPU seconds per job (default: --timeout)"
    )
    parser.add_argument("--memory-mb", type=int, default=int(_env("MEMORY_MB", DEFAULTS.memory_mb)))
    parser.add_argument(
        "--max-result-mb", type=int, default=int(_env("MAX_RESULT_MB", DEFAULTS.max_result_mb))
    )
    parser.add_argument(
        "--workers", type=int, default=int(_env("WORKERS", 0)), help="parallel jobs (default: CPUs)"
    )
    parser.add_argument("--queue-depth", type=int, default=int(_env("QUEUE_DEPTH", DEFAULTS.queue_depth)))
    parser.add_argument(
        "--job-nice",
        type=int,
        default=int(_env("JOB_NICE", DEFAULTS.job_nice)),
        help="scheduling niceness of job children, 0-19 (the supervisor stays at its own)",
    )
    parser.add_argument(
        "--documents-per-child",
        type=int,
        default=int(_env("DOCUMENTS_PER_CHILD", DEFAULTS.documents_per_child)),
        help="documents one sandboxed job child may read, all from one root and one client "
        "(default 1: a fresh child per document; more saves CPU per document, see docs/security.md)",
    )
    parser.add_argument(
        "--child-idle-seconds",
        type=float,
        default=float(_env("CHILD_IDLE_SECONDS", DEFAULTS.child_idle_s)),
        help="with --documents-per-child above 1: how long a child that read a document waits for "
        "the next one of its client and root before it exits",
    )
    parser.add_argument(
        "--cache-mb",
        type=int,
        default=int(_env("CACHE_MB", DEFAULTS.cache_mb)),
        help="memory for cached results of repeated calls (0 disables)",
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=Path(_env("CACHE_DIR", "")) if _env("CACHE_DIR", "") else None,
        help="also keep cached results in this directory (created 0700; off by default); they last "
        "across restarts only with --cache-key-file",
    )
    parser.add_argument(
        "--cache-key-file",
        type=Path,
        default=Path(_env("CACHE_KEY_FILE", "")) if _env("CACHE_KEY_FILE", "") else None,
        help="secret that authenticates --cache-dir's entries, kept outside it (read, or created "
        "0600 if missing); without it the key is random per process and so is the disk cache",
    )
    parser.add_argument(
        "--cache-disk-mb",
        type=int,
        default=int(_env("CACHE_DISK_MB", DEFAULTS.cache_disk_mb)),
        help="disk space for --cache-dir (least recently used entries are removed past it)",
    )
    parser.add_argument(
        "--shutdown-grace",
        type=float,
        default=float(_env("SHUTDOWN_GRACE", DEFAULTS.shutdown_grace_s)),
        help="seconds in-flight calls may take to finish after SIGTERM",
    )
    parser.add_argument(
        "--require-sandbox",
        default=_env("REQUIRE_SANDBOX", ""),
        help="comma-separated sandbox layers that must be active (e.g. seccomp,landlock,namespaces); "
        "the server refuses to start and jobs refuse to run without them",
    )
    parser.add_argument(
        "--net-namespace",
        action="store_true",
        default=_env("NET_NAMESPACE", "") == "1",
        help="also give each job its own network namespace (adds set-up time to every job)",
    )
    parser.add_argument("--log-level", default=_env("LOG_LEVEL", "info"))
    for flag, (_field, default, (lowest, highest), kind, _factor, text) in _PROTOCOL_FLAGS.items():
        env = flag.removeprefix("--").replace("-", "_").upper()
        help_text = f"{text} ({_num(lowest)}-{_num(highest)}, default {_num(default)}; env PDF_AIRLOCK_{env})"
        parser.add_argument(flag, type=kind, default=kind(_env(env, default)), help=help_text)
    for flag, (limit, kind, factor, text) in _OCR_FLAGS.items():
        default, lowest, highest = OCR_LIMITS[limit]
        env = flag.removeprefix("--").replace("-", "_").upper()
        bounds = f"{_shown(lowest, factor)}-{_shown(highest, factor)}"
        value = kind(_env(env, _shown(default, factor)))
        parser.add_argument(flag, type=kind, default=value, help=f"{text} ({bounds}; env PDF_AIRLOCK_{env})")


def _num(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _shown(limit: int, factor: int) -> str:
    """An OCR limit in its flag's unit."""
    return str(limit) if factor == 1 else f"{limit / factor:g}"


def _ocr_settings(ns: argparse.Namespace) -> dict[str, OcrLimits]:
    """The ``ocr`` field of ``Settings``; a value ``OcrLimits`` refuses is a usage error."""
    values = {
        limit: round(getattr(ns, flag.removeprefix("--").replace("-", "_")) * factor)
        for flag, (limit, _kind, factor, _text) in _OCR_FLAGS.items()
    }
    try:
        return {"ocr": OcrLimits(**values)}
    except OcrLimitError as exc:
        flags = {limit: (flag, factor) for flag, (limit, _kind, factor, _text) in _OCR_FLAGS.items()}
        flag, factor = flags[exc.limit]
        if exc.bounds is None:
            _usage(f"{flag} must not exceed {flags['dpi'][0]}")
        lowest, highest = exc.bounds
        _usage(f"{flag} must be from {_shown(lowest, factor)} to {_shown(highest, factor)}")


def _protocol_settings(ns: argparse.Namespace) -> dict[str, Any]:
    """The ``Settings`` fields of ``_PROTOCOL_FLAGS``; a value out of its range is a usage error."""
    fields: dict[str, Any] = {}
    for flag, (name, _default, (lowest, highest), kind, factor, _text) in _PROTOCOL_FLAGS.items():
        value = getattr(ns, flag.removeprefix("--").replace("-", "_"))
        if not lowest <= value <= highest:
            _usage(f"{flag} must be from {_num(lowest)} to {_num(highest)}")
        fields[name] = kind(value * factor)
    return fields


def _settings(ns: argparse.Namespace) -> Settings:
    roots = ns.root or [Path(p) for p in _env("ROOTS", "").split(":") if p] or [Path.cwd()]
    for root in roots:
        if not root.is_dir():
            _usage(f"--root {root} is not a directory")
    positive = {"--max-file-mb": ns.max_file_mb, "--timeout": ns.timeout, "--memory-mb": ns.memory_mb}
    for flag, value in positive.items():
        if value <= 0:
            _usage(f"{flag} must be positive")
    if ns.busy_stretch < 1:
        _usage("--busy-stretch must be at least 1")
    if not 0 <= ns.job_nice <= _MAX_NICE:
        _usage(f"--job-nice must be between 0 and {_MAX_NICE}")
    if not 1 <= ns.documents_per_child <= DEFAULTS.max_documents_per_child:
        _usage(f"--documents-per-child must be between 1 and {DEFAULTS.max_documents_per_child}")
    if not 0 < ns.child_idle_seconds <= DEFAULTS.max_child_idle_s:
        _usage(f"--child-idle-seconds must be above 0 and at most {DEFAULTS.max_child_idle_s:g}")
    required = tuple(layer.strip() for layer in ns.require_sandbox.split(",") if layer.strip())
    unknown = sorted(set(required) - set(SANDBOX_LAYERS))
    if unknown:
        _usage(f"unknown sandbox layer(s) {', '.join(unknown)}; known: {', '.join(SANDBOX_LAYERS)}")
    overrides: dict[str, Any] = _ocr_settings(ns) | _protocol_settings(ns)
    if ns.cache_dir is not None and ns.cache_disk_mb > 0:
        overrides.update(_cache_overrides(ns.cache_dir, ns.cache_key_file))
    elif (
        ns.cache_key_file is not None
    ):  # it signs cursors too (``pdf_airlock.server.tools.cursors.share_key``)
        overrides.update(_key_file_override(ns.cache_key_file, None))
    if ns.workers > 0:
        overrides["workers"] = ns.workers
    overrides.update(_serve_overrides(ns))
    return Settings(
        roots=tuple(roots),
        max_file_bytes=ns.max_file_mb * MIB,
        timeout_s=ns.timeout,
        cpu_seconds=ns.cpu_seconds or max(1, int(ns.timeout)),
        memory_bytes=ns.memory_mb * MIB,
        max_result_bytes=ns.max_result_mb * MIB,
        queue_depth=ns.queue_depth,
        shutdown_grace_s=ns.shutdown_grace,
        cache_bytes=max(0, ns.cache_mb) * MIB,
        cache_disk_bytes=max(0, ns.cache_disk_mb) * MIB,
        require_layers=required,
        net_namespace=ns.net_namespace,
        job_nice=ns.job_nice,
        busy_stretch=ns.busy_stretch,
        documents_per_child=ns.documents_per_child,
        child_idle_s=ns.child_idle_seconds,
        **overrides,
    )


def _serve_overrides(ns: argparse.Namespace) -> dict[str, Any]:
    """``serve``'s HTTP limits (``config.SERVE_LIMITS``); none for the other commands."""
    if not hasattr(ns, "transport"):
        return {}
    from pdf_airlock.server.http.options import UsageError, serve_settings

    try:
        return serve_settings(ns)
    except UsageError as exc:
        _usage(str(exc))


def _cache_overrides(cache_dir: Path, key_file: Path | None) -> dict[str, Path]:
    """Start-up checks of the disk cache: a bad directory or key file is a usage error."""
    from pdf_airlock.server.app.cache import CacheDirError, prepare_directory

    try:
        prepare_directory(cache_dir)
    except CacheDirError as exc:
        _usage(f"--cache-dir: {exc}")
    overrides = {"cache_dir": cache_dir.resolve()}
    if key_file is not None:
        overrides.update(_key_file_override(key_file, overrides["cache_dir"]))
    return overrides


def _key_file_override(key_file: Path, cache_dir: Path | None) -> dict[str, Path]:
    from pdf_airlock.server.app.cache import CacheKeyError, prepare_key_file

    try:
        prepare_key_file(key_file, cache_dir)
    except CacheKeyError as exc:
        _usage(f"--cache-key-file: {exc}")
    return {"cache_key_file": key_file.absolute()}  # not resolved: a symlink stays refused


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pdf-airlock", description="Sandboxed MCP server for untrusted PDFs."
    )
    parser.add_argument("--version", action="version", version=f"pdf-airlock {__version__}")
    commands = parser.add_subparsers(dest="command")
    serve = commands.add_parser("serve", help="run the MCP server: stdio (default) or streamable-http")
    _add_settings_flags(serve)
    from pdf_airlock.server.http.options import add_http_flags

    add_http_flags(serve)
    call = commands.add_parser("call", help="run one tool and print its result as JSON")
    call.add_argument("tool")
    call.add_argument("--json", dest="arguments", default="{}", help="tool arguments as a JSON object")
    _add_settings_flags(call)
    batch = commands.add_parser("batch", help="run one tool over many documents, one JSON line each")
    batch.add_argument("tool")
    batch.add_argument("paths", nargs="*", type=Path, help="PDF files, or directories searched for *.pdf")
    batch.add_argument("--out", type=Path, required=True, help="JSON Lines output (appended; resumable)")
    batch.add_argument("--jobs", type=int, default=0, help="documents in parallel (default: CPUs)")
    batch.add_argument(
        "--chunks",
        type=Path,
        help="a tool with RAG chunks: also write each chunk as a JSON line (id sha256:n), for a vector store",
    )
    batch.add_argument("--json", dest="arguments", default="{}", help="extra tool arguments as a JSON object")
    batch.add_argument(
        "--max-document-mb",
        type=float,
        default=float(_env("BATCH_MAX_DOCUMENT_MB", DEFAULTS.batch_max_document_mb)),
        help="most MB of JSON result one document's line gathers by following cursors; past it "
        "the line has complete: false and the cursor to go on from",
    )
    batch.add_argument(
        "--progress",
        choices=BATCH_PROGRESS_MODES,
        default=_env("BATCH_PROGRESS", "auto"),
        help="bar (tqdm), json (a batch_progress event every --progress-seconds) or none; "
        "auto: bar when stderr is a terminal, else json",
    )
    batch.add_argument(
        "--progress-seconds",
        type=float,
        default=float(_env("BATCH_PROGRESS_SECONDS", DEFAULTS.batch_progress_s)),
        help="seconds between batch_progress events (json progress)",
    )
    _add_shard_flags(batch)
    _add_settings_flags(batch)
    batch.set_defaults(log_level=_env("LOG_LEVEL", "warning"))  # progress shares stderr
    merge = commands.add_parser(
        "batch-merge", help="join the shard outputs of a sharded batch run; report missing and duplicates"
    )
    merge.add_argument("out", type=Path, help="the --out the sharded runs were given")
    merge.add_argument("--merged", type=Path, required=True, help="the merged JSON Lines file to write")
    merge.add_argument(
        "--inputs",
        nargs="*",
        type=Path,
        default=[],
        help="the run's inputs again (as given to batch): report each document no shard settled",
    )
    merge.add_argument("--list", dest="list_file", type=Path, help="the run's --list file again")
    merge.add_argument("--root", action="append", type=Path, help="the run's --root again (repeatable)")
    merge.add_argument("--log-level", default=_env("LOG_LEVEL", "warning"))
    selftest = commands.add_parser(
        "self-test",
        help="report which sandbox layers are active here, and whether OCR and the fallback fonts work",
    )
    selftest.add_argument("--json", action="store_true", help="print JSON instead of a table")
    _add_settings_flags(selftest)
    return parser


def _add_shard_flags(batch: argparse.ArgumentParser) -> None:
    """``batch``'s inputs from a list, and its shard (``pdf_airlock.server.batch.shard``)."""
    batch.add_argument(
        "--list",
        dest="list_file",
        type=Path,
        help="a file naming inputs one a line (files or directories), as the command line would",
    )
    batch.add_argument(
        "--shard",
        default=_env("SHARD", None),
        help="INDEX/COUNT (index from 0): read only this shard's documents, by a hash of each "
        "one's path under its root; the output is --out with .shard-I-of-N before its suffix",
    )
    batch.add_argument(
        "--documents-may-fail",
        action="store_true",
        default=_env("BATCH_DOCUMENTS_MAY_FAIL", "") == "1",
        help="exit 0, not 1, when every document has its line, failed ones included (for an "
        "orchestrator that would run the stage again on 1: a hostile document fails the same way)",
    )
    batch.add_argument(
        "--shards",
        type=int,
        default=int(_env("SHARDS", 0)) or None,
        help="the shard count, the index coming from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job)",
    )


def _batch_inputs(ns: argparse.Namespace) -> list[Path]:
    """The paths named, then those of the --list file."""
    from pdf_airlock.server.batch.inputs import listed

    paths = list(ns.paths)
    if ns.list_file is not None:
        try:
            paths += listed(ns.list_file)
        except OSError as exc:
            _usage(f"--list {ns.list_file}: {exc.strerror or type(exc).__name__}")
    if not paths:
        _usage("batch needs inputs: paths, or --list FILE")
    return paths


def _batch_merge(ns: argparse.Namespace) -> int:
    from pdf_airlock.server.batch.inputs import documents, named_roots
    from pdf_airlock.server.batch.merge import merge_shards
    from pdf_airlock.server.batch.shard import ShardError

    ns.paths = ns.inputs
    given = bool(ns.inputs or ns.list_file)
    paths = _batch_inputs(ns) if given else []
    roots = tuple(ns.root or [Path(p) for p in _env("ROOTS", "").split(":") if p] or named_roots(paths))
    expected = list(documents(paths, roots)) if given else None
    try:
        report = merge_shards(ns.out, ns.merged, expected, roots)
    except ShardError as exc:
        _usage(str(exc))
    except OSError as exc:
        _usage(f"batch-merge: {exc.strerror or type(exc).__name__} ({exc.filename})")
    report.log()
    return report.status


async def _self_test(settings: Settings, as_json: bool) -> int:
    from pdf_airlock.server.cli.selftest import render_table
    from pdf_airlock.server.pool.pool import Pool
    from pdf_airlock.server.pool.probe import missing_layers, probe_layers

    async with Pool(1, 1, DEFAULTS.zygote_start_timeout_s, settings.kill_grace_s) as pool:
        layers = await probe_layers(pool, settings, checks=True)
    missing = missing_layers(layers, settings.require_layers)
    if as_json:
        payload = {"layers": layers, "required": list(settings.require_layers), "missing": missing}
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
    else:
        sys.stdout.write(render_table(layers) + "\n")
        if missing:
            sys.stdout.write(f"missing required layer(s): {', '.join(missing)}\n")
    return 1 if missing else 0


async def _call(settings: Settings, tool: str, arguments: dict[str, Any]) -> int:
    from pdf_airlock.server.app.calls import App
    from pdf_airlock.server.pool.pool import Pool

    async with Pool(
        settings.workers, settings.queue_depth, DEFAULTS.zygote_start_timeout_s, settings.kill_grace_s
    ) as pool:
        result = await App(settings, pool).call_tool(tool, arguments)
    payload = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    return 1 if result.is_error else 0


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        _usage("--json must be a JSON object")
    return value


def _usage(problem: str) -> NoReturn:
    """Bad usage: the message on stderr, exit status 2 (as argparse's own errors)."""
    sys.stderr.write(f"pdf-airlock: {problem}\n")
    raise SystemExit(2)


def _batch(ns: argparse.Namespace, settings: Settings) -> int:
    """``pdf-airlock batch``: its exit status."""
    from pdf_airlock.server.batch.inputs import named_roots
    from pdf_airlock.server.batch.run import run_batch
    from pdf_airlock.server.batch.shard import ShardError, chosen_shard

    ns.paths = _batch_inputs(ns)
    try:
        shard = chosen_shard(ns.shard, ns.shards, os.environ)
    except ShardError as exc:
        _usage(str(exc))
    if ns.jobs > 0:
        settings = dataclasses.replace(settings, workers=ns.jobs)
    if not ns.root and not _env("ROOTS", ""):  # the folders and files named are the roots
        settings = dataclasses.replace(settings, roots=named_roots(ns.paths))
    if ns.max_document_mb <= 0:
        _usage("--max-document-mb must be positive")
    if ns.progress_seconds <= 0:
        _usage("--progress-seconds must be positive")
    max_document_bytes = int(ns.max_document_mb * MIB)
    try:
        status = run_batch(
            settings,
            ns.tool,
            _json_object(ns.arguments),
            ns.paths,
            ns.out,
            max_document_bytes=max_document_bytes,
            progress=ns.progress,
            progress_every_s=ns.progress_seconds,
            chunks=ns.chunks,
            shard=shard,
        )
    except KeyboardInterrupt:  # before the run's own handling of SIGINT was up
        status = 128 + signal.SIGINT.value
    if status == 1 and ns.documents_may_fail:  # 1: some document failed; each has its line
        status = 0
    return status


def _serve(ns: argparse.Namespace, settings: Settings) -> NoReturn:
    """``pdf-airlock serve``: over stdio, or Streamable HTTP with ``--transport``."""
    if getattr(ns, "transport", "stdio") == "streamable-http":
        from pdf_airlock.server.http.serve import main as serve_http

        raise SystemExit(serve_http(settings, ns))
    from pdf_airlock.server.stdio.startup import serve

    approval = None
    if getattr(ns, "policy", None) is not None:  # on stdio only its [approval] table applies
        from pdf_airlock.server.app.policy import PolicyError, load_policy

        try:
            approval = load_policy(ns.policy, settings.roots, settings.max_file_bytes).approval
        except PolicyError as exc:
            _usage(f"--policy: {exc}")
    anyio.run(serve, settings, approval)
    # Everything is closed and the zygote is gone; skip tearing down the interpreter's modules
    # (about a tenth of a second of the shutdown the client waits for). stdout is written with
    # os.write only, so nothing is left in a buffer; flush stderr's.
    sys.stderr.flush()
    os._exit(0)


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or (args[0].startswith("-") and args[0] not in ("-h", "--help", "--version")):
        args.insert(0, "serve")
    ns = _parser().parse_args(args)
    from pdf_airlock.server.log import configure_logging

    configure_logging(ns.log_level)
    if ns.command == "batch-merge":
        raise SystemExit(_batch_merge(ns))
    settings = _settings(ns)
    if ns.command == "call":
        raise SystemExit(anyio.run(_call, settings, ns.tool, _json_object(ns.arguments)))
    if ns.command == "batch":
        raise SystemExit(_batch(ns, settings))
    if ns.command == "self-test":
        raise SystemExit(anyio.run(_self_test, settings, ns.json))
    _serve(ns, settings)
