//! Per op code: how many rows and the distribution of their simulated durations, as
//! counts of distinct integer-ns values. Fed a chunk of replayed rows at a time, so a
//! streamed replay summarises without keeping its per-op table; memory grows with the
//! distinct durations, not the rows. In-memory and streamed replays summarise through
//! this same code, so their summaries are identical.

use std::collections::HashMap;

use fast_hash::FastMap;
use numpy::PyReadonlyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::time::round_ns;

#[derive(Default)]
struct Durations {
    counts: FastMap<i64, u64>,
    rows: u64,
    total_ns: i128,
}

impl Durations {
    /// Percentile `q` (0..=100) with numpy's default (linear) interpolation between the
    /// two order statistics around rank (n - 1) q / 100.
    fn percentile(sorted: &[(i64, u64)], n: u64, q: f64) -> f64 {
        let h = (n - 1) as f64 * q / 100.0;
        let lo = h.floor() as u64;
        let hi = (lo + 1).min(n - 1);
        let (a, b) = (Self::nth(sorted, lo) as f64, Self::nth(sorted, hi) as f64);
        let t = h - lo as f64;
        let diff = b - a;
        // numpy's _lerp: exact at both ends of the interval.
        if t >= 0.5 {
            b - diff * (1.0 - t)
        } else {
            a + diff * t
        }
    }

    /// The k-th smallest duration (0-based) of the sorted (value, count) pairs.
    fn nth(sorted: &[(i64, u64)], k: u64) -> i64 {
        let mut seen = 0;
        for &(v, c) in sorted {
            seen += c;
            if k < seen {
                return v;
            }
        }
        sorted.last().map_or(0, |p| p.0)
    }
}

/// Summary statistics of replayed operations; see tailcast/_core.pyi.
#[pyclass(module = "tailcast._core")]
#[derive(Default)]
pub struct OpStats {
    /// By op code; an op with no rows has not been seen.
    ops: Vec<Durations>,
}

impl OpStats {
    /// Adds rows of the given op codes; `duration(i)` is row i's (ns).
    fn add_durations(&mut self, op: &[u8], duration: impl Fn(usize) -> i64) {
        // Replays repeat the same (op, duration) for long stretches: count runs first.
        let Some(&first) = op.first() else { return };
        let mut run = (first, duration(0), 0u64);
        for (i, &code) in op.iter().enumerate() {
            let d = duration(i);
            if (code, d) != (run.0, run.1) {
                self.add_run(run);
                run = (code, d, 0);
            }
            run.2 += 1;
        }
        self.add_run(run);
    }

    /// Adds `rows` rows of op `code` that took `d` ns each.
    fn add_run(&mut self, (code, d, rows): (u8, i64, u64)) {
        if self.ops.len() <= code as usize {
            self.ops.resize_with(code as usize + 1, Durations::default);
        }
        let entry = &mut self.ops[code as usize];
        *entry.counts.entry(d).or_default() += rows;
        entry.rows += rows;
        entry.total_ns += i128::from(d) * i128::from(rows);
    }

    /// `add` on the engine's rows: `ReplayStream.summarise_ops` feeds them straight in,
    /// their simulated times (ns, f64) rounded as `take_ops` rounds them.
    pub(crate) fn add_times(&mut self, op: &[u8], start: &[f64], end: &[f64]) {
        assert!(op.len() == start.len() && op.len() == end.len());
        self.add_durations(op, |i| round_ns(end[i]) - round_ns(start[i]));
    }
}

#[pymethods]
impl OpStats {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    /// Adds rows: their op codes and simulated start and end times (ns).
    fn add(
        &mut self,
        op: PyReadonlyArray1<'_, u8>,
        sim_start_ns: PyReadonlyArray1<'_, i64>,
        sim_end_ns: PyReadonlyArray1<'_, i64>,
    ) -> PyResult<()> {
        let (op, start, end) = (
            op.as_slice()?,
            sim_start_ns.as_slice()?,
            sim_end_ns.as_slice()?,
        );
        if op.len() != start.len() || op.len() != end.len() {
            return Err(PyValueError::new_err(
                "op, sim_start_ns, sim_end_ns differ in length",
            ));
        }
        self.add_durations(op, |i| end[i] - start[i]);
        Ok(())
    }

    /// op code → (rows, p50 µs, p99 µs, total µs) of sim_end_ns - sim_start_ns.
    fn summary(&self) -> HashMap<u8, (u64, f64, f64, f64)> {
        self.ops
            .iter()
            .enumerate()
            .filter(|(_, d)| d.rows > 0)
            .map(|(code, d)| {
                let mut sorted: Vec<(i64, u64)> = d.counts.iter().map(|(&v, &c)| (v, c)).collect();
                sorted.sort_unstable();
                let p50 = Durations::percentile(&sorted, d.rows, 50.0) / 1000.0;
                let p99 = Durations::percentile(&sorted, d.rows, 99.0) / 1000.0;
                (code as u8, (d.rows, p50, p99, d.total_ns as f64 / 1000.0))
            })
            .collect()
    }
}
