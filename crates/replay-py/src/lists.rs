//! List columns (requests, send_counts, recv_counts, comm_members) → CSR offsets/values.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use replay_engine::trace::Lists;

use crate::ingest::{append_ints, unsupported, Source};

/// A list column in CSR form; `offsets` stays empty while every list so far is empty (the
/// engine reads empty offsets as "all lists empty").
#[derive(Default)]
pub(crate) struct Csr {
    pub(crate) offsets: Vec<i64>,
    pub(crate) values: Vec<i64>,
    rows: usize,
    /// Reused: the list offsets and child values of the batch being appended.
    spans: Vec<i64>,
    child: Vec<i64>,
}

impl Csr {
    pub(crate) fn clear(&mut self) {
        self.offsets.clear();
        self.values.clear();
        self.rows = 0;
    }

    /// Appends a list column (a null list is empty; null elements are 0).
    pub(crate) fn append(&mut self, src: Source<'_>, rows: usize) -> PyResult<()> {
        let col = match src {
            Source::Column(c) if !c.all_null() && c.len() > 0 => c,
            Source::Native(name, c, _) if !c.all_null() => {
                return self.append_native(name, c, rows)
            }
            _ => {
                self.pad(rows);
                return Ok(());
            }
        };
        let (o, n) = (col.offset(), col.len());
        self.spans.clear();
        match col.format() {
            "+l" => self.spans.extend(
                col.buffer::<i32>(1, o + n + 1)?[o..]
                    .iter()
                    .map(|&v| i64::from(v)),
            ),
            "+L" => self
                .spans
                .extend_from_slice(&col.buffer::<i64>(1, o + n + 1)?[o..]),
            _ => return Err(unsupported(&col)),
        }
        let bad = || PyValueError::new_err(format!("column {}: bad list offsets", col.name()));
        let children = col.children();
        let child = children.first().ok_or_else(bad)?;
        let (first, last) = (self.spans[0], self.spans[n]);
        if first < 0 || last < first || last as usize > child.len() {
            return Err(bad());
        }
        if first == last {
            self.pad(rows);
            return Ok(());
        }
        // Only the values this batch's lists use (a slice of a row group's batch shares
        // the whole row group's child array).
        self.child.clear();
        let used = child.slice(first as usize, (last - first) as usize);
        append_ints(Source::Column(used), used.len(), 0i64, &mut self.child)?;
        if self.offsets.is_empty() {
            self.offsets.resize(self.rows + 1, 0);
        }
        let valid = col.validity();
        for i in 0..n {
            let (lo, hi) = (self.spans[i], self.spans[i + 1]);
            if hi > lo && valid.is_none_or(|v| v.is_valid(i)) {
                if lo < first || hi > last {
                    return Err(bad());
                }
                let (a, b) = ((lo - first) as usize, (hi - first) as usize);
                self.values.extend_from_slice(&self.child[a..b]);
            }
            self.offsets.push(self.values.len() as i64);
        }
        self.rows += rows;
        Ok(())
    }

    fn append_native(
        &mut self,
        name: &str,
        col: &parquet_lite::Column,
        rows: usize,
    ) -> PyResult<()> {
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
