# Two commands do all the set-up (see README): `make serve` and `make test`.
# Every recipe line is silent and installer output goes to stderr: stdout of `make serve` is the
# MCP protocol stream.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: serve test check quick lint clean

$(STAMP): pyproject.toml constraints.txt
	@echo "== installing pdf-airlock and its test tools into $(VENV) (pinned by constraints.txt; a minute or two on a first run)" >&2
	@$(PYTHON) -m venv $(VENV) >&2
	@$(BIN)/python -m pip install -q --disable-pip-version-check -c constraints.txt -e '.[test]' >&2
	@touch $@

serve: $(STAMP)
	@exec $(BIN)/pdf-airlock serve --root examples

lint: $(STAMP)
	@echo "== lint: ruff, ruff format, mypy, hadolint" >&2
	@$(BIN)/ruff check .
	@$(BIN)/ruff format --check .
	@$(BIN)/mypy
	@$(BIN)/hadolint Dockerfile

# Runs the container tests too when a Docker engine can be set up here (see scripts/test.sh).
test: lint
	@scripts/test.sh

# The inner loop: lint and every test that needs no container.
check: lint
	@PDF_AIRLOCK_DOCKER=0 scripts/test.sh

# The quickest loop (well under two minutes on 2 cores): ruff, then the unit tests (tests/unit:
# no sandbox, no server, no container; markers in pyproject.toml). mypy runs in `make lint`.
quick: $(STAMP)
	@$(BIN)/ruff check .
	@$(BIN)/ruff format --check .
	@$(BIN)/pytest -q -m "unit and not slow"

clean:
	@rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
