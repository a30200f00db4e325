# tailcast: CI runs these same targets (.ci/run = make lint && make test).
SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)
export PYO3_PYTHON := $(CURDIR)/.venv/bin/python
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.tailcast-installed
RUNTIME_STAMP := $(VENV)/.tailcast-runtime
ENGINE_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml Cargo.lock

.PHONY: install runtime sysdeps demo test lint bench wheel clean

# What make cannot install itself (cargo; Python >= 3.11 with venv), checked before any
# target that builds: one line naming what is missing. ($(shell) gets the PATH above only
# when given it: make 4.3 does not export to it.)
ifneq ($(filter-out sysdeps clean,$(or $(MAKECMDGOALS),install)),)
MISSING_TOOLS := $(shell PATH="$(PATH)" scripts/check-build-tools 2>&1)
ifneq ($(MISSING_TOOLS),)
$(error $(MISSING_TOOLS))
endif
endif

# The venv and maturin, which builds the engine into it.
define VENV_WITH_MATURIN
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q -U pip 'maturin>=1.7,<2'
endef

# The package (editable) and its runtime dependencies only, the engine built with the
# `demo` profile (Cargo.toml: no LTO, about half the build time on 2 cores): what `make demo`
# needs. A release build from `make install` serves as well.
runtime: $(RUNTIME_STAMP)

$(RUNTIME_STAMP): pyproject.toml $(ENGINE_SOURCES)
	$(VENV_WITH_MATURIN)
	$(VENV)/bin/maturin develop --profile demo -q
	touch $@

# The same with the dev tools (pytest, ruff, mypy, ...): what `make test`/`make lint` need.
install: $(STAMP)

$(STAMP): pyproject.toml $(ENGINE_SOURCES)
	$(VENV_WITH_MATURIN)
	$(VENV)/bin/maturin develop --release -q -E dev
	touch $@ $(RUNTIME_STAMP)

# One abi3 wheel for manylinux2014 (glibc 2.17) and the sdist, in dist/. zig links the
# engine against glibc 2.17's symbol versions, so no container is needed (maturin finds zig
# through the venv's python on PATH); `auditwheel show` must confirm the tag. Users install
# the wheel with no Rust toolchain.
WHEEL_TOOLS := 'ziglang==0.17.1' 'auditwheel==6.8.2'
PACKAGE_FILES := $(shell find src -type f ! -name '*.so' ! -name '*.pyc') README.md
WHEEL_STAMP := dist/.tailcast-wheel

wheel: $(WHEEL_STAMP)

$(WHEEL_STAMP): $(STAMP) $(ENGINE_SOURCES) $(PACKAGE_FILES)
	rm -rf dist
	$(PY) -m pip install -q $(WHEEL_TOOLS)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/maturin build --release --zig \
		--compatibility manylinux2014 --out dist -q
	$(VENV)/bin/maturin sdist --out dist
	$(VENV)/bin/auditwheel show dist/*.whl | tee dist/auditwheel.txt
	grep -q '"manylinux_2_17_x86_64"' dist/auditwheel.txt
	touch $@

# Debian packages the tests need (Slurm, munge, Open MPI, Chromium, ...) when root and
# missing; the demo needs none of them.
sysdeps:
	scripts/install-system-deps

demo: runtime
	$(VENV)/bin/tailcast quickstart

test: install sysdeps wheel
	scripts/run-tests

lint: install
	$(VENV)/bin/ruff check src tests bench scripts/labnet
	$(VENV)/bin/ruff format --check src tests bench scripts/labnet
	$(VENV)/bin/mypy
	$(PY) -m mypy.stubtest tailcast._core
	cargo clippy --workspace --all-targets --features replay-engine/fixture-fabrics --quiet -- -D warnings
	cargo fmt --all --check

bench: install sysdeps
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) target dist
