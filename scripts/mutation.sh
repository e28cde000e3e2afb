#!/usr/bin/env bash
# Mutation testing of the supervisor's security-critical modules with mutmut (3.x, in .venv).
#
#   scripts/mutation.sh                    # the "boundary" set (below), then a score per module
#                                          # and the diff of each survivor
#   scripts/mutation.sh --modules signed   # another set: boundary, signed, auth or all
#   scripts/mutation.sh 'pdf_airlock.server.boundary.paths.*'   # only the mutants whose names match
#
# Sets (the default, "boundary", is the affordable run on 2 cores; "all" is every set in one run):
# - boundary: the path policy (server/pdf_airlock/server/boundary/paths.py), result classification (server/pdf_airlock/server/pool/verdict.py,
#   server/pdf_airlock/server/pool/child_output.py), untrusted-result validation (server/pdf_airlock/server/tools/untrusted.py) and sanitising
#   (server/pdf_airlock/server/boundary/sanitize.py). mutmut 3 mutates function and method bodies only, so the declarative
#   models of server/pdf_airlock/server/tools/untrusted.py yield no mutants: tests/unit/test_untrusted.py pins their caps.
# - signed: what a client or the disk hands back under a MAC: signed cursors (server/pdf_airlock/server/tools/cursors.py)
#   and the disk cache's checks of its entries, key file and directory (server/pdf_airlock/server/app/cache.py).
# - auth: bearer tokens on HTTP: the verifier and its middleware (server/pdf_airlock/server/http/auth.py) and
#   its keys, a JWKS file or URL (server/pdf_airlock/server/http/jwks.py), judged by tests/unit/test_jwt_verifier.py,
#   which drives them on explicit clocks against a fake identity provider on a real port.
# Each mutant is judged by the fast in-process unit tests of its set only (the ones whose names
# end in "over_stdio" spawn the real server and are left out).
#
# mutmut reads its settings from pyproject.toml and works in a folder "mutants/" beside it.
# So that the tree is never touched (others run tests from it while this runs), everything
# happens in a scratch copy: the sources and tests are copied there, a [tool.mutmut] block for
# the chosen set is appended to the copy's pyproject.toml, and the copy is deleted at the end
# (keep it for `mutmut show NAME` / `mutmut browse` with MUTATION_KEEP=1).
#
# mutmut names a mutant after its file's path from the project root (only a leading "src/" is
# dropped), and a mutant runs only when that name is the module name the tests imported. So the
# scratch copy joins the two source roots into one tree, pdf_airlock/server + pdf_airlock/worker
# (the namespace has no __init__.py, so the join is the package the tests import), and mutmut
# mutates "pdf_airlock": server/pdf_airlock/server/app/cache.py becomes pdf_airlock/server/app/cache.py,
# named pdf_airlock.server.app.cache. mutmut puts mutants/ first on sys.path and the tests run there
# (pytest's pythonpath "." is mutants/ too; "server" and "worker" do not exist in it), so both the
# in-process tests and the interpreters they start with cwd=mutants/ import the mutated copy.
set -euo pipefail
cd "$(dirname "$0")/.."
project=$PWD
mutmut="$project/.venv/bin/mutmut"
children="${MUTATION_CHILDREN:-$(nproc)}"

modules_boundary=(server/pdf_airlock/server/boundary/paths.py server/pdf_airlock/server/pool/verdict.py server/pdf_airlock/server/pool/child_output.py server/pdf_airlock/server/tools/untrusted.py server/pdf_airlock/server/boundary/sanitize.py)
tests_boundary=(tests/protocol/test_paths.py tests/unit/test_sanitize.py tests/unit/test_untrusted.py tests/unit/test_classify.py)
modules_signed=(server/pdf_airlock/server/tools/cursors.py server/pdf_airlock/server/app/cache.py)
tests_signed=(tests/tools/test_cursor.py tests/unit/test_cache_checks.py)
modules_auth=(server/pdf_airlock/server/http/auth.py server/pdf_airlock/server/http/jwks.py)
tests_auth=(tests/unit/test_jwt_verifier.py)

set_name=boundary
case "${1:-}" in
  --modules) set_name="${2:?--modules needs a set: boundary, signed, auth or all}"; shift 2 ;;
  --modules=*) set_name="${1#--modules=}"; shift ;;
esac
case "$set_name" in
  boundary) modules=("${modules_boundary[@]}") tests=("${tests_boundary[@]}") ;;
  signed) modules=("${modules_signed[@]}") tests=("${tests_signed[@]}") ;;
  auth) modules=("${modules_auth[@]}") tests=("${tests_auth[@]}") ;;
  all)
    modules=("${modules_boundary[@]}" "${modules_signed[@]}" "${modules_auth[@]}")
    tests=("${tests_boundary[@]}" "${tests_signed[@]}" "${tests_auth[@]}")
    ;;
  *) echo "unknown set '$set_name': boundary, signed, auth or all" >&2; exit 2 ;;
esac

scratch=$(mktemp -d "${TMPDIR:-/tmp}/pdf-airlock-mutation.XXXXXX")
if [ "${MUTATION_KEEP:-0}" = 1 ]; then
  echo "scratch copy kept in $scratch" >&2
else
  trap 'rm -rf "$scratch"' EXIT
fi

toml_items() { # a b -> "a", "b", (the items of a TOML array)
  printf '"%s", ' "$@"
}

scratch_path() { # server/pdf_airlock/server/app/cache.py -> pdf_airlock/server/app/cache.py (its source root dropped)
  printf '%s\n' "${1#*/}"
}

for root in server worker; do
  tar --exclude=__pycache__ -C "$root" -cf - pdf_airlock | tar -xf - -C "$scratch"
done
tar --exclude=__pycache__ -cf - tests pyproject.toml | tar -xf - -C "$scratch"
mutated=()
for module in "${modules[@]}"; do
  mutated+=("$(scratch_path "$module")")
done
if grep -q '^\[tool\.mutmut\]' "$scratch/pyproject.toml"; then
  echo "pyproject.toml has its own [tool.mutmut]: remove it, this script writes one per set" >&2
  exit 2
fi
cat >>"$scratch/pyproject.toml" <<EOF

[tool.mutmut]
source_paths = ["pdf_airlock"]
only_mutate = [$(toml_items "${mutated[@]}")]
pytest_add_cli_args_test_selection = [$(toml_items "${tests[@]}")"-k", "not over_stdio"]
pytest_add_cli_args = ["-p", "no:cacheprovider"]
EOF

cd "$scratch"
# mutmut draws a progress spinner: its output goes to a log, shown only if the run fails.
if ! "$mutmut" run --max-children "$children" "$@" >run.log 2>&1; then
  tr '\r' '\n' <run.log | tail -40 >&2
  exit 1
fi
tr '\r' '\n' <run.log | grep -E 'mutations/second|done in' >&2 || true
"$mutmut" results --all true >results.txt

# Names are "pdf_airlock.server.boundary.paths.x_within__mutmut_3" or "pdf_airlock.server.boundary.paths.xǁPathPolicyǁresolve__mutmut_1".
# "killed" counts mutants the tests caught (a timeout is caught too); "other" is any other verdict
# (no tests, suspicious, segfault...).
echo "| module | killed | survived | other | total |"
echo "|---|---|---|---|---|"
awk -F': ' '{
  module = $1; sub(/^ +/, "", module); sub(/\.x(ǁ|_).*$/, "", module)
  total[module]++
  if ($2 == "killed" || $2 == "timeout") killed[module]++
  else if ($2 == "survived") survived[module]++
  else other[module]++
} END {
  for (m in total) printf "| %s | %d | %d | %d | %d |\n", m, killed[m], survived[m], other[m], total[m]
}' results.txt | sort

grep -v ': \(killed\|timeout\)$' results.txt | while IFS=': ' read -r name status; do
  echo
  "$mutmut" show "$name" 2>/dev/null || echo "# $name: $status"
done
