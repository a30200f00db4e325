# tailcast: CI runs these same targets (.ci/run = make lint && make test).
SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)
export PYO3_PYTHON := $(CURDIR)/.venv/bin/python
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.tailcast-installed
ENGINE_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml Cargo.lock

.PHONY: install sysdeps demo test lint bench wheel clean

# Build the Rust extension and install the package (editable) with its dev tools.
install: $(STAMP)

$(STAMP): pyproject.toml $(ENGINE_SOURCES)
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q -U pip 'maturin>=1.7,<2'
	$(VENV)/bin/maturin develop --release -q -E dev
	touch $@

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

# Debian packages (Slurm, munge, Open MPI, ...) when root and missing.
sysdeps:
	scripts/install-system-deps

demo: install sysdeps
	$(VENV)/bin/tailcast quickstart

test: install sysdeps wheel
	scripts/run-tests

lint: install
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench
	$(VENV)/bin/mypy
	$(PY) -m mypy.stubtest tailcast._core
	cargo clippy --workspace --all-targets --features replay-engine/fixture-fabrics --quiet -- -D warnings
	cargo fmt --all --check

bench: install sysdeps
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) target dist
