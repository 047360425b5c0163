VENV := .venv
PY := $(VENV)/bin/python
APP_STAMP := $(VENV)/.installed-app
DEV_STAMP := $(VENV)/.installed-dev
# Exact versions of everything installed here (pyproject.toml has the compatible ranges).
CONSTRAINTS := constraints.txt
PIP_INSTALL = -m pip install --quiet -c $(CONSTRAINTS)
HATCHLING := hatchling==1.33.0
# The built wheel, installed (not editable) into a clean venv; the end-to-end suites run there.
DIST := dist
WHEEL_VENV := .venv-wheel
E2E_SUITES := tests/e2e tests/hosts tests/hooks tests/hub/test_sync_e2e.py tests/package
# The unit suites (everything else) run in .venv and on every other Python 3.11 to 3.13 found,
# in PYTEST_WORKERS processes (pytest-xdist; a test file stays in one process, and each process
# makes its own PostgreSQL database): about half the time on two cores.
UNIT_SUITES := tests $(addprefix --ignore=,$(E2E_SUITES))
PYTEST_WORKERS ?= 2
PARALLEL := -n $(PYTEST_WORKERS) --dist loadfile
PYENV_ROOT ?= $(HOME)/.pyenv
BASE_VERSION := $(shell python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
OTHER_VERSIONS := $(filter-out $(BASE_VERSION),$(foreach v,3.11 3.12 3.13,$(if $(wildcard $(PYENV_ROOT)/versions/$(v).*/bin/python3),$(v))))
NPM := $(shell command -v npm 2>/dev/null)
export NO_MKDOCS_2_WARNING := 1

.PHONY: chromium run test test-prereqs test-wheel test-pythons docs bench lint constraints clean

$(VENV)/bin/python:
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(APP_STAMP): pyproject.toml $(CONSTRAINTS) | $(VENV)/bin/python
	$(PY) $(PIP_INSTALL) -e .
	touch $(APP_STAMP)

$(DEV_STAMP): pyproject.toml $(CONSTRAINTS) | $(VENV)/bin/python
	$(PY) $(PIP_INSTALL) -e '.[dev,semantic]'
	touch $(DEV_STAMP) $(APP_STAMP)

run: $(APP_STAMP)
	$(VENV)/bin/aletheia-server

lint: $(DEV_STAMP)
	$(VENV)/bin/ruff check src tests bench docs/hooks
	$(VENV)/bin/ruff format --check src tests bench docs/hooks
	$(VENV)/bin/mypy

# The docs site (mkdocs.yml): strict, so a broken link or anchor fails the build.
docs: $(DEV_STAMP)
	$(VENV)/bin/mkdocs build --strict --quiet

# What CI runs (.ci/run is `make clean test`): lint, the docs, the unit suites in .venv, the
# end-to-end suites against the built wheel, then the unit suites on the other Pythons.
# (`.venv/bin/python -m pytest` alone runs every suite in the editable .venv.)
test: lint docs test-prereqs
	$(PY) -m pytest $(PARALLEL) $(UNIT_SUITES)
	$(MAKE) test-wheel
	$(MAKE) test-pythons

# Everything the tests drive that is not a Python package. Node: the real host CLIs
# (tests/hosts) and the official TS MCP client, conformance suite and Node 22 (tests/node).
# Tests that need a missing one skip, except under CI (CI=true), where they fail.
# Further prerequisites (a browser for the web UI tests, say) are added to TEST_PREREQS.
# The browser tests need Debian's Chromium (launched by path, never downloaded by Playwright)
# and axe-core (tests/web/package-lock.json).
AXE_JS := tests/web/node_modules/axe-core/axe.min.js
TEST_PREREQS := chromium $(if $(NPM),$(AXE_JS))
ifeq ($(NPM),)
test-prereqs: $(TEST_PREREQS)
	@echo "npm not found: the real host CLI and Node client tests will skip"
else
test-prereqs: $(TEST_PREREQS) tests/hosts/node_modules/.installed tests/node/node_modules/.installed
endif

chromium:
	test -x /usr/bin/chromium || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium)

$(AXE_JS): tests/web/package-lock.json
	npm ci --prefix tests/web --no-audit --no-fund
	touch $(AXE_JS)

tests/hosts/node_modules/.installed: tests/hosts/package.json tests/hosts/package-lock.json
	npm install --prefix tests/hosts --no-audit --no-fund --no-save
	touch $@

tests/node/node_modules/.installed: tests/node/package.json tests/node/package-lock.json
	npm ci --prefix tests/node --no-audit --no-fund
	touch $@

# Build the sdist and, from it, the wheel; check them; install the wheel into a clean venv and
# run the end-to-end suites against that install (tests/package checks it is not this tree).
test-wheel: $(DEV_STAMP)
	rm -rf $(DIST) $(WHEEL_VENV)
	PIP_CONSTRAINT=$(abspath $(CONSTRAINTS)) $(PY) -m build --outdir $(DIST) . > /dev/null
	$(VENV)/bin/twine check --strict $(DIST)/*
	python3 -m venv $(WHEEL_VENV)
	$(WHEEL_VENV)/bin/python $(PIP_INSTALL) "$$(ls $(DIST)/*.whl)[dev,semantic]"
	ALETHEIA_TEST_DIST=$(abspath $(DIST)) $(WHEEL_VENV)/bin/python -m pytest -p no:cacheprovider $(E2E_SUITES)

.venv-py%/.installed: pyproject.toml $(CONSTRAINTS)
	$(firstword $(wildcard $(PYENV_ROOT)/versions/$*.*/bin/python3)) -m venv .venv-py$*
	.venv-py$*/bin/python $(PIP_INSTALL) -e '.[dev,semantic]'
	touch $@

# On the other Pythons the suites run on SQLite alone: the PostgreSQL runs of the parametrised
# suites (tests/stores.py) test the same Python code a second time, on another database.
test-pythons: $(foreach v,$(OTHER_VERSIONS),.venv-py$(v)/.installed)
	@echo "unit suites on Python $(BASE_VERSION) (.venv) and on: $(or $(OTHER_VERSIONS),none other found)"
	@for v in $(OTHER_VERSIONS); do \
		echo "== Python $$v"; \
		ALETHEIA_TEST_STORES=sqlite .venv-py$$v/bin/python -m pytest -q -p no:cacheprovider $(PARALLEL) $(UNIT_SUITES) || exit 1; \
	done

bench: $(DEV_STAMP)
	$(PY) bench/run.py

# Rewrite constraints.txt from what .venv has now (after changing a range in pyproject.toml:
# pip install -U the package into .venv, then make constraints).
constraints:
	{ echo "# Exact versions make test (hence CI) installs: pip install -c constraints.txt ..."; \
	  echo "# Regenerate with make constraints; pyproject.toml keeps compatible ranges."; \
	  $(PY) -m pip freeze --exclude-editable | grep -vi '^aletheia-mem'; \
	  echo '$(HATCHLING)'; } > $(CONSTRAINTS)

clean:
	rm -rf $(VENV) $(WHEEL_VENV) .venv-py3.* $(DIST) site
