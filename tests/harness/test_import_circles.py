"""scripts/check-import-circles finds files that import each other, in Rust crates and in
Python packages, on small trees written here, and finds none in the replay engine and the
tailcast package."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "check-import-circles"


def check(*targets: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, targets)],
        capture_output=True,
        text=True,
        check=False,
    )


def crate(root: Path, files: dict[str, str]) -> Path:
    (root / "Cargo.toml").parent.mkdir(parents=True, exist_ok=True)
    (root / "Cargo.toml").write_text('[package]\nname = "t"\nversion = "0.1.0"\n')
    for name, text in files.items():
        path = root / "src" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_sibling_files_that_import_each_other_are_a_circle(tmp_path: Path) -> None:
    # The shape of parquet-lite's writer.rs <-> column_write.rs: an impl continued in a
    # second file that imports the first's types, which imports a helper back.
    root = crate(
        tmp_path / "writerlike",
        {
            "lib.rs": "mod column_write;\nmod writer;\npub use writer::Writer;\n",
            "writer.rs": "use crate::column_write::Buffers;\npub struct Writer { b: Buffers }\n",
            "column_write.rs": (
                "use crate::writer::{ColumnSpec, Writer};\n"
                "pub(crate) struct Buffers;\nimpl Writer { fn chunk(&self) {} }\n"
            ),
        },
    )
    done = check(root)
    assert done.returncode == 1, done.stdout
    assert (
        "circle of 2 files: writerlike/src/column_write.rs, writerlike/src/writer.rs" in done.stdout
    )
    assert (
        "writerlike/src/column_write.rs -> writerlike/src/writer.rs: ColumnSpec, Writer"
        in done.stdout
    )
    assert "writerlike/src/writer.rs -> writerlike/src/column_write.rs: Buffers" in done.stdout


def test_a_re_export_and_grouped_super_imports_close_a_circle(tmp_path: Path) -> None:
    # The shape of replay-py's ingest.rs <-> lists.rs / op_names.rs: a re-export one way,
    # helpers imported the other way inside a use tree.
    root = crate(
        tmp_path / "ingestlike",
        {
            "lib.rs": "mod ingest;\nmod lists;\nmod op_names;\n",
            "ingest.rs": (
                "pub(crate) use crate::lists::Csr;\n"
                "pub(crate) use crate::op_names::{append_ops, OpTable};\n"
                "pub enum Source {}\npub fn append_ints() {}\npub fn unsupported() {}\n"
            ),
            "lists.rs": (
                "use crate::{\n    ingest::{append_ints, unsupported, Source},\n};\n"
                "pub struct Csr;\n"
            ),
            "op_names.rs": "use super::ingest::{Source, unsupported};\npub struct OpTable;\n",
        },
    )
    done = check(root)
    assert done.returncode == 1
    members = "ingestlike/src/ingest.rs, ingestlike/src/lists.rs, ingestlike/src/op_names.rs"
    assert f"circle of 3 files: {members}" in done.stdout
    assert "lists.rs -> ingestlike/src/ingest.rs: Source, append_ints, unsupported" in done.stdout
    assert "ingest.rs -> ingestlike/src/op_names.rs: OpTable, append_ops" in done.stdout


def test_a_mod_rs_face_and_its_children_are_no_circle_but_a_path_split_is(
    tmp_path: Path,
) -> None:
    root = crate(
        tmp_path / "faces",
        {
            "lib.rs": "pub mod solver;\npub mod plan;\n",
            # a folder: mod.rs declares and uses its children, they use what it shares
            "solver/mod.rs": (
                "mod fill;\nuse fill::Candidate;\npub struct Solver { c: Candidate }\n"
                "pub(super) const EPS: f64 = 1e-9;\n"
            ),
            "solver/fill.rs": (
                "use super::{Solver, EPS};\npub(super) struct Candidate;\n"
                "impl Solver { pub(in crate::solver) fn fill(&self) {} }\n"
            ),
            # a file that pulls a sibling file in as its child and is used back by it
            "plan.rs": '#[path = "plan_order.rs"]\nmod order;\npub struct Plan;\n',
            "plan_order.rs": "use super::Plan;\nfn order(_: &Plan) {}\n",
        },
    )
    done = check(root)
    assert done.returncode == 1
    assert "1 circle(s)" in done.stdout
    assert "circle of 2 files: faces/src/plan.rs, faces/src/plan_order.rs" in done.stdout
    assert "faces/src/plan.rs -> faces/src/plan_order.rs: mod order" in done.stdout
    assert "solver" not in done.stdout.split("circle(s)")[1]


def test_what_cfg_test_guards_is_no_import(tmp_path: Path) -> None:
    # Round-trip tests: each side's test module uses the other side.
    root = crate(
        tmp_path / "roundtrip",
        {
            "lib.rs": "mod decode;\nmod encode;\n",
            "encode.rs": (
                "pub fn delta() {}\n#[cfg(test)]\nmod tests {\n    use crate::decode::Decoder;\n}\n"
            ),
            "decode.rs": (
                "pub struct Decoder;\n#[cfg(test)]\nmod tests {\n"
                "    fn f() { crate::encode::delta(); }\n}\n"
            ),
        },
    )
    done = check(root)
    assert done.returncode == 0, done.stdout
    assert "no circle" in done.stdout


def test_python_circles_count_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    root = package(
        tmp_path / "pkg",
        {
            "__init__.py": "",
            "traces/__init__.py": "",
            "traces/poisson.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from pkg.replay.fabric import Fabric\n"
            ),
            "replay/__init__.py": "",
            "replay/fabric.py": "def load():\n    from ..traces import poisson\n",
            "replay/run.py": "import pkg.replay.fabric\n",
        },
    )
    done = check(root)
    assert done.returncode == 1
    assert "circle of 2 files: pkg/replay/fabric.py, pkg/traces/poisson.py" in done.stdout
    assert "pkg/traces/poisson.py -> pkg/replay/fabric.py: Fabric" in done.stdout
    assert "pkg/replay/fabric.py -> pkg/traces/poisson.py: poisson" in done.stdout


def test_the_replay_engine_and_the_tailcast_package_have_no_circle() -> None:
    done = check(REPO / "crates" / "replay-engine", REPO / "src" / "tailcast")
    assert done.returncode == 0, done.stdout
    assert "crate crates/replay-engine: no circle" in done.stdout
    assert "package src/tailcast: no circle" in done.stdout
