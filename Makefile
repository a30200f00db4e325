# tailcast: CI runs these same targets (.ci/run = make lint && make test).
SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)
export PYO3_PYTHON := $(CURDIR)/.venv/bin/python
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.tailcast-installed
ENGINE_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml Cargo.lock

.PHONY: install sysdeps demo test lint bench clean

# Build the Rust extension and install the package (editable) with its dev tools.
install: $(STAMP)

$(STAMP): pyproject.toml $(ENGINE_SOURCES)
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q -U pip 'maturin>=1.7,<2'
	$(VENV)/bin/maturin develop --release -q -E dev
	touch $@

# Debian packages (Slurm, munge, Open MPI, ...) when root and missing.
sysdeps:
	scripts/install-system-deps

demo: install sysdeps
	$(VENV)/bin/tailcast quickstart

test: install sysdeps
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
	rm -rf $(VENV) target
