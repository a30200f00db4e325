//! A batch of TRACE rows decoded by the native Parquet reader (crates/parquet-lite): its
//! columns by name, and integer columns appended as the engine's value types.

use std::collections::HashMap;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Where a column's values come from.
#[derive(Clone, Copy)]
pub(crate) enum Source<'a> {
    /// Decoded: its name, values and the string dictionary of its cursor.
    Decoded(&'a str, &'a parquet_lite::Column, &'a [Vec<u8>]),
    /// Absent from the file: every value null.
    Absent,
}

impl Source<'_> {
    /// Every value null (absent, or a column of nulls).
    pub(crate) fn all_null(&self) -> bool {
        match self {
            Source::Decoded(_, c, _) => c.all_null(),
            Source::Absent => true,
        }
    }

    /// Whether row `i` holds a value.
    pub(crate) fn is_valid(&self, i: usize) -> bool {
        match self {
            Source::Decoded(_, c, _) => c.is_valid(i),
            Source::Absent => false,
        }
    }
}

/// The decoded columns of a run of rows, by name.
pub(crate) struct Batch<'a> {
    columns: HashMap<&'a str, Source<'a>>,
    pub(crate) rows: usize,
}

impl<'a> Batch<'a> {
    /// `rows` rows of the given columns: (name, column, its cursor's dictionary) each.
    pub(crate) fn new(
        columns: impl IntoIterator<Item = (&'a str, &'a parquet_lite::Column, &'a [Vec<u8>])>,
        rows: usize,
    ) -> Self {
        let columns = columns
            .into_iter()
            .map(|(name, col, dict)| (name, Source::Decoded(name, col, dict)))
            .collect();
        Self { columns, rows }
    }

    pub(crate) fn get(&self, name: &str) -> Source<'a> {
        self.columns.get(name).copied().unwrap_or(Source::Absent)
    }
}

/// A value type of the engine's columns, converted from a file's integers.
pub(crate) trait Target: Copy {
    fn from_i64(v: i64) -> Self;
}

macro_rules! target {
    ($($t:ty),*) => {$(
        impl Target for $t {
            #[inline]
            fn from_i64(v: i64) -> Self {
                v as $t // wraps like numpy's astype did
            }
        }
    )*};
}
target!(i32, i64);

impl Target for u32 {
    /// Through i32 like numpy's int32 → uint32 casts did (negative ranks are rejected).
    #[inline]
    fn from_i64(v: i64) -> Self {
        v as i32 as u32
    }
}

/// Appends an integer column as T, nulls as `fill`; an absent or all-null column is `rows`
/// fills.
pub(crate) fn append_ints<T: Target>(
    src: Source<'_>,
    rows: usize,
    fill: T,
    out: &mut Vec<T>,
) -> PyResult<()> {
    let Source::Decoded(name, col, _) = src else {
        out.resize(out.len() + rows, fill);
        return Ok(());
    };
    if col.all_null() {
        out.resize(out.len() + rows, fill);
        return Ok(());
    }
    let parquet_lite::Values::Ints(values) = &col.values else {
        return Err(PyValueError::new_err(format!(
            "column {name} holds strings or lists, expected integers"
        )));
    };
    match &col.valid {
        None => out.extend(values.iter().map(|&v| T::from_i64(v))),
        Some(valid) => {
            out.extend(
                values
                    .iter()
                    .zip(valid)
                    .map(|(&v, &ok)| if ok { T::from_i64(v) } else { fill }),
            )
        }
    }
    Ok(())
}
