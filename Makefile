VENV := .venv
PY := $(VENV)/bin/python
APP_STAMP := $(VENV)/.installed-app
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: run test bench lint clean web-test-deps

$(VENV)/bin/python:
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(APP_STAMP): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -e .
	touch $(APP_STAMP)

$(DEV_STAMP): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -e '.[dev,semantic]'
	touch $(DEV_STAMP) $(APP_STAMP)

run: $(APP_STAMP)
	$(VENV)/bin/aletheia-server

lint: $(DEV_STAMP)
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench
	$(VENV)/bin/mypy

# The browser tests' prerequisites: Debian's Chromium (launched by path, never downloaded by
# Playwright) and axe-core (tests/web/package-lock.json).
AXE_JS := tests/web/node_modules/axe-core/axe.min.js

web-test-deps: $(AXE_JS)
	test -x /usr/bin/chromium || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium)

$(AXE_JS): tests/web/package-lock.json
	npm ci --prefix tests/web --no-audit --no-fund
	touch $(AXE_JS)

test: lint web-test-deps
	$(PY) -m pytest

bench: $(DEV_STAMP)
	$(PY) bench/run.py

clean:
	rm -rf $(VENV)
