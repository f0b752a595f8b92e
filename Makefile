# Every target that needs tools makes the venv first, so a fresh clone needs only python3 and make.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: help venv build build-grpc test lint fmt demo bench clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP) ## create .venv with the project and its dev tools

build: $(STAMP) ## build ./resource-gpu and ./resource-storage
	$(PY) build.py --python $(PYTHON)

build-grpc: $(STAMP) ## build both executables with the gRPC transport into build/grpc/
	$(PY) build.py --grpc --python $(PYTHON)

test: build ## run the whole test suite (starts its own throwaway etcd)
	$(PY) -m pytest -q

lint: $(STAMP) ## ruff check, ruff format --check, mypy --strict
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy

fmt: $(STAMP) ## format the code
	$(PY) -m ruff check --fix .
	$(PY) -m ruff format .

demo: build ## play core against a throwaway etcd
	$(PY) -m resource_extend.demo

bench: build ## per-call cost, measured side by side
	$(PY) -m resource_extend.bench

clean: ## remove build output and the venv
	rm -rf build $(VENV) resource-gpu resource-storage
