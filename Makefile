# Two commands get a newcomer running: `make demo` and `make test`.
# Both need only python3 and make; everything else is installed here
# (a virtual environment from PyPI; for the browser test, Chromium from Debian's packages).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
DEMO_DB := sample.db
PORT ?= 8001
# apt-get needs root: use sudo when not root already.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_INSTALL := DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq

.PHONY: demo test lint install chromium clean readme schema mutants python-mutants

$(INSTALLED): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(INSTALLED)

install: $(INSTALLED)

# Chromium runs the browser tests.
chromium:
	@command -v chromium >/dev/null 2>&1 || { echo "Installing chromium (Debian)"; \
	  $(SUDO) apt-get update -qq && $(APT_INSTALL) chromium >/dev/null; }

## Index sample_repo/, report what is wrong with it, then browse it in Datasette.
demo: $(INSTALLED)
	$(BIN)/labnote-index build sample_repo --db $(DEMO_DB)
	@$(BIN)/labnote-index check --db $(DEMO_DB) || \
	  echo "(check exits $$? because sample_repo has planted defects: sample_repo/DEFECTS.md)"
	$(BIN)/labnote-index serve $(DEMO_DB) --port $(PORT)

## Lint, format check, type check, then the whole test suite.
test: lint chromium
	$(BIN)/pytest

lint: $(INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

## Mutate the checks' SQL one change at a time; list what no test notices.
mutants: $(INSTALLED)
	$(BIN)/python mutation/sql_mutants.py --jobs 2

## Mutate the Python that decides findings (mutmut, [tool.mutmut] in pyproject.toml); each
## mutant runs the tests that reach it. mutants/ is a git repository of its own, so that
## this checkout's .gitignore (which ignores mutants/) does not make its files "ignored".
python-mutants: $(INSTALLED)
	rm -rf mutants && mkdir mutants && git -C mutants init -q
	$(BIN)/mutmut run --max-children 2
	$(BIN)/mutmut results

## Regenerate the README's generated parts (check catalogue, command reference) with cog.
readme: $(INSTALLED)
	$(BIN)/cog -r README.md

# The index's tables as one script, from their sqlite-utils definitions
# (index/schema.py); a test fails until it is current.
schema: $(INSTALLED)
	$(BIN)/python -c "from labnote_index.index import schema; schema.SCHEMA_SCRIPT.write_text(schema.schema_script(), encoding='utf-8')"

clean:
	rm -rf $(VENV) $(DEMO_DB) *.egg-info .pytest_cache .ruff_cache
