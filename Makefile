# Two commands get a newcomer running: `make demo` and `make test`.
# Both need only python3 and make; everything else is installed here.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
DEMO_DB := sample.db

.PHONY: demo test lint install clean readme

$(INSTALLED): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(INSTALLED)

install: $(INSTALLED)

## Index sample_repo/, report what is wrong with it.
demo: $(INSTALLED)
	$(BIN)/labnote-index build sample_repo --db $(DEMO_DB)
	-$(BIN)/labnote-index check --db $(DEMO_DB)

## Lint, format check, then the whole test suite.
test: lint
	$(BIN)/pytest

lint: $(INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) $(DEMO_DB) *.egg-info .pytest_cache .ruff_cache

## Regenerate the README's check catalogue from the check headers.
readme: $(INSTALLED)
	$(BIN)/python -c "import re, pathlib; from labnote_index.checks import load_checks; \
	from labnote_index.report import catalogue_markdown; p = pathlib.Path('README.md'); \
	start, end = '<!-- catalogue:start -->\n', '\n<!-- catalogue:end -->'; t = p.read_text(); \
	p.write_text(t.split(start)[0] + start + catalogue_markdown(load_checks()) + end + t.split(end)[1])"
