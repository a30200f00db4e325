//! List columns (requests, send_counts, recv_counts, comm_members) → CSR offsets/values.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use replay_engine::trace::Lists;

use crate::source::Source;

/// A list column in CSR form; `offsets` stays empty while every list so far is empty (the
/// engine reads empty offsets as "all lists empty").
#[derive(Default)]
pub(crate) struct Csr {
    pub(crate) offsets: Vec<i64>,
    pub(crate) values: Vec<i64>,
    rows: usize,
}

impl Csr {
    pub(crate) fn clear(&mut self) {
        self.offsets.clear();
        self.values.clear();
        self.rows = 0;
    }

    /// Appends a list column (a null list is empty).
    pub(crate) fn append(&mut self, src: Source<'_>, rows: usize) -> PyResult<()> {
        let Source::Decoded(name, col, _) = src else {
            self.pad(rows);
            return Ok(());
        };
        if col.all_null() {
            self.pad(rows);
            return Ok(());
        }
        let parquet_lite::Values::Lists { offsets, values } = &col.values else {
            return Err(PyValueError::new_err(format!(
                "column {name} is not a list of integers"
            )));
        };
        if values.is_empty() {
            self.pad(rows);
            return Ok(());
        }
        if self.offsets.is_empty() {
            self.offsets.resize(self.rows + 1, 0);
        }
        for (i, w) in offsets.windows(2).enumerate() {
            if col.is_valid(i) {
                self.values
                    .extend_from_slice(&values[w[0] as usize..w[1] as usize]);
            }
            self.offsets.push(self.values.len() as i64);
        }
        self.rows += rows;
        Ok(())
    }

    /// `rows` empty lists.
    fn pad(&mut self, rows: usize) {
        if !self.offsets.is_empty() {
            let last = self.values.len() as i64;
            self.offsets.resize(self.offsets.len() + rows, last);
        }
        self.rows += rows;
    }

    pub(crate) fn lists(&self) -> Lists<'_> {
        Lists {
            offsets: &self.offsets,
            values: &self.values,
        }
    }

    /// Moves the CSR out (offsets, values).
    pub(crate) fn into_parts(self) -> (Vec<i64>, Vec<i64>) {
        (self.offsets, self.values)
    }
}
