//! Op names of a trace (a dictionary-encoded string column) → the engine's op codes, one
//! lookup per distinct name.

use std::collections::HashMap;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::source::Source;

/// `raw.strip().lower().removeprefix("mpi_")` of the Python side.
pub(crate) fn normalise_op(raw: &str) -> String {
    let lowered = raw.trim().to_lowercase();
    match lowered.strip_prefix("mpi_") {
        Some(rest) => rest.to_string(),
        None => lowered,
    }
}

/// Op name → code; names not in the table count as unknown (code 0, `other`).
pub(crate) struct OpTable {
    codes: HashMap<&'static str, u8>,
}

impl OpTable {
    pub(crate) fn new() -> Self {
        let codes = replay_engine::ops::OP_TABLE
            .iter()
            .map(|&(name, op)| (name, op as u8))
            .collect();
        Self { codes }
    }

    /// The code of a raw op string and whether the name is known.
    pub(crate) fn code(&self, raw: &str) -> (u8, Option<String>) {
        let name = normalise_op(raw);
        match self.codes.get(name.as_str()) {
            Some(&c) => (c, None),
            None => (0, Some(name)),
        }
    }
}

/// Appends the op codes of a string column (keys into its cursor's dictionary); unknown
/// names are counted in `unknown` when given. A null or absent op is code 0, not counted.
pub(crate) fn append_ops(
    src: Source<'_>,
    rows: usize,
    table: &OpTable,
    out: &mut Vec<u8>,
    unknown: Option<&mut HashMap<String, u64>>,
) -> PyResult<()> {
    let Source::Decoded(_, col, dict) = src else {
        out.resize(out.len() + rows, 0);
        return Ok(());
    };
    if col.all_null() {
        out.resize(out.len() + rows, 0);
        return Ok(());
    }
    let parquet_lite::Values::Strings(keys) = &col.values else {
        return Err(PyValueError::new_err(
            "column op: expected strings, got a number",
        ));
    };
    // One code per dictionary entry, then per row.
    let mapped = dict
        .iter()
        .map(|raw| {
            let name = std::str::from_utf8(raw)
                .map_err(|_| PyValueError::new_err("column op: invalid UTF-8"))?;
            Ok(table.code(name))
        })
        .collect::<PyResult<Vec<_>>>()?;
    let mut counts = vec![0u64; dict.len()];
    out.extend(keys.iter().enumerate().map(|(i, &k)| {
        if col.is_valid(i) {
            counts[k as usize] += 1;
            mapped[k as usize].0
        } else {
            0
        }
    }));
    if let Some(unknown) = unknown {
        for ((_, name), k) in mapped.iter().zip(counts) {
            if let (Some(name), true) = (name, k > 0) {
                *unknown.entry(name.clone()).or_default() += k;
            }
        }
    }
    Ok(())
}
