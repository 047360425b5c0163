VENV := .venv
PY := $(VENV)/bin/python
APP_STAMP := $(VENV)/.installed-app
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: run test bench lint clean

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

test: lint
	$(PY) -m pytest

bench: $(DEV_STAMP)
	$(PY) bench/run.py

clean:
	rm -rf $(VENV)
