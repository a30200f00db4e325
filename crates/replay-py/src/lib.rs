//! pyo3 binding: exposes replay-engine to Python as `tailcast._core`.
//! Only conversions live here; all semantics are in the engine crate.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Version of the Rust replay engine.
#[pyfunction]
fn engine_version() -> &'static str {
    replay_engine::engine_version()
}

/// Replays a trace's calls without a network (per-rank order, captured durations,
/// compute gaps scaled by `compute_scale`); returns each row's replayed end time in ns.
#[pyfunction]
#[pyo3(signature = (rank, t_start_ns, t_end_ns, compute_scale = 1.0))]
fn replay_local<'py>(
    py: Python<'py>,
    rank: PyReadonlyArray1<'py, u32>,
    t_start_ns: PyReadonlyArray1<'py, i64>,
    t_end_ns: PyReadonlyArray1<'py, i64>,
    compute_scale: f64,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let (r, s, e) = (rank.as_slice()?, t_start_ns.as_slice()?, t_end_ns.as_slice()?);
    let ends = py
        .allow_threads(|| replay_engine::timeline::replay_local(r, s, e, compute_scale))
        .map_err(|err| PyValueError::new_err(err.to_string()))?;
    Ok(ends.into_pyarray(py))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(engine_version, m)?)?;
    m.add_function(wrap_pyfunction!(replay_local, m)?)?;
    Ok(())
}
