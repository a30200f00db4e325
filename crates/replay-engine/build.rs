//! Lists the fabric models: every `src/fabric/models/*.rs` and `src/fabric/models/*/mod.rs`
//! (and, with the `fixture-fabrics` feature, every `tests/fixture_fabrics/*.rs`) becomes a
//! module whose `MODEL` joins the registry. Adding a fabric is adding its file.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

fn modules(dir: &Path) -> Vec<(String, PathBuf)> {
    println!("cargo:rerun-if-changed={}", dir.display());
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(String, PathBuf)> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter_map(|p| {
            let name = p.file_stem()?.to_string_lossy().into_owned();
            if p.extension().is_some_and(|x| x == "rs") {
                Some((name, p))
            } else {
                // A model with files of its own (its tests): a folder with mod.rs.
                let face = p.join("mod.rs");
                face.is_file().then_some((name, face))
            }
        })
        .collect();
    found.sort();
    found
}

fn main() {
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let mut found = modules(&root.join("src/fabric/models"));
    if env::var_os("CARGO_FEATURE_FIXTURE_FABRICS").is_some() {
        found.extend(modules(&root.join("tests/fixture_fabrics")));
    }
    let mut out = String::new();
    for (name, path) in &found {
        println!("cargo:rerun-if-changed={}", path.display());
        writeln!(
            out,
            "#[path = {:?}]\npub mod {name};",
            path.display().to_string()
        )
        .unwrap();
    }
    out += "/// Every model module's `MODEL`.\npub static MODELS: &[&crate::fabric::registry::Model] = &[\n";
    for (name, _) in &found {
        writeln!(out, "    &{name}::MODEL,").unwrap();
    }
    out += "];\n";
    let dest = PathBuf::from(env::var("OUT_DIR").expect("cargo sets it")).join("fabric_models.rs");
    fs::write(dest, out).expect("write the model list");
}
