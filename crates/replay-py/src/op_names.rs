//! Op names of a trace (strings or a dictionary of strings) → the engine's op codes, one
//! lookup per distinct name.

use std::collections::HashMap;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::arrow::{with_int_values, Array, IntValue, Validity};
use crate::ingest::{unsupported, Source};

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

/// The strings of a utf8 / large utf8 (or binary) array, nulls as None.
fn strings<'a>(col: &Array<'a>) -> PyResult<Vec<Option<&'a str>>> {
    let (o, n) = (col.offset(), col.len());
    let offsets: Vec<usize> = match col.format() {
        "u" | "z" => col.buffer::<i32>(1, o + n + 1)?[o..]
            .iter()
            .map(|&v| v.max(0) as usize)
            .collect(),
        "U" | "Z" => col.buffer::<i64>(1, o + n + 1)?[o..]
            .iter()
            .map(|&v| v.max(0) as usize)
            .collect(),
        _ => return Err(unsupported(col)),
    };
    let data = col.buffer::<u8>(2, offsets.last().copied().unwrap_or(0))?;
    let valid = col.validity();
    (0..n)
        .map(|i| {
            if valid.is_some_and(|v| !v.is_valid(i)) {
                return Ok(None);
            }
            let bytes = data.get(offsets[i]..offsets[i + 1]).ok_or_else(|| {
                PyValueError::new_err(format!("column {}: bad string offsets", col.name()))
            })?;
            std::str::from_utf8(bytes)
                .map(Some)
                .map_err(|_| PyValueError::new_err(format!("column {}: invalid UTF-8", col.name())))
        })
        .collect()
}

/// Per row `codes[index]` of a dictionary array (any integer index type; a null or
/// out-of-range index is code 0), counting the rows of each index.
fn map_indices(
    col: &Array<'_>,
    codes: &[u8],
    counts: &mut [u64],
    out: &mut Vec<u8>,
) -> PyResult<()> {
    fn run<I: Copy>(
        src: &[I],
        valid: Option<Validity<'_>>,
        codes: &[u8],
        counts: &mut [u64],
        out: &mut Vec<u8>,
        idx: impl Fn(I) -> usize,
    ) {
        out.extend(src.iter().enumerate().map(|(i, &v)| {
            let k = idx(v);
            if k < codes.len() && valid.is_none_or(|b| b.is_valid(i)) {
                counts[k] += 1;
                codes[k]
            } else {
                0
            }
        }));
    }
    let valid = col.validity();
    with_int_values!(
        col,
        |values| run(values, valid, codes, counts, out, |v| v.as_i64() as usize),
        return Err(unsupported(col))
    );
    Ok(())
}

/// Op codes of a natively decoded string column (keys into its cursor's dictionary).
fn append_native_ops(
    col: &parquet_lite::Column,
    dict: &[Vec<u8>],
    table: &OpTable,
    out: &mut Vec<u8>,
    unknown: Option<&mut HashMap<String, u64>>,
) -> PyResult<()> {
    let parquet_lite::Values::Strings(keys) = &col.values else {
        return Err(PyValueError::new_err(
            "column op: expected strings, got a number",
        ));
    };
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

/// Appends the op codes of a string or dictionary-of-strings column; unknown names are
/// counted in `unknown` when given. A null op is code 0 and not counted.
pub(crate) fn append_ops(
    src: Source<'_>,
    rows: usize,
    table: &OpTable,
    out: &mut Vec<u8>,
    unknown: Option<&mut HashMap<String, u64>>,
) -> PyResult<()> {
    let col = match src {
        Source::Column(c) if !c.all_null() => c,
        Source::Native(_, c, dict) if !c.all_null() => {
            return append_native_ops(c, dict, table, out, unknown)
        }
        Source::Str(name) => {
            let (code, missing) = table.code(name);
            out.resize(out.len() + rows, code);
            if let (Some(unknown), Some(name), true) = (unknown, missing, rows > 0) {
                *unknown.entry(name).or_default() += rows as u64;
            }
            return Ok(());
        }
        Source::Int(_) => {
            return Err(PyValueError::new_err(
                "column op: expected strings, got a number",
            ))
        }
        _ => {
            out.resize(out.len() + rows, 0);
            return Ok(());
        }
    };
    // One code per distinct name (the dictionary, or the strings seen), then per row.
    let (names, plain_idx): (Vec<Option<&str>>, Option<Vec<u32>>) = match col.dictionary() {
        Some(dict) => (strings(&dict)?, None),
        None => {
            let values = strings(&col)?;
            let mut seen: HashMap<Option<&str>, u32> = HashMap::new();
            let mut names = Vec::new();
            let idx = values
                .iter()
                .map(|&v| {
                    *seen.entry(v).or_insert_with(|| {
                        names.push(v);
                        names.len() as u32 - 1
                    })
                })
                .collect();
            (names, Some(idx))
        }
    };
    let mapped: Vec<(u8, Option<String>)> = names
        .iter()
        .map(|n| n.map_or((0, None), |s| table.code(s)))
        .collect();
    let codes: Vec<u8> = mapped.iter().map(|m| m.0).collect();
    let mut counts = vec![0u64; names.len()];
    match plain_idx {
        None => map_indices(&col, &codes, &mut counts, out)?,
        Some(idx) => out.extend(idx.iter().map(|&k| {
            counts[k as usize] += 1;
            codes[k as usize]
        })),
    }
    if let Some(unknown) = unknown {
        for ((n, (_, name)), k) in names.iter().zip(&mapped).zip(counts) {
            if let (Some(name), true, true) = (name, k > 0, n.is_some()) {
                *unknown.entry(name.clone()).or_default() += k;
            }
        }
    }
    Ok(())
}
