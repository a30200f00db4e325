//! The engine's `ReplayError` as a typed Python exception: `tailcast._core.ReplayError`
//! (a ValueError) whose fields say what to look at.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use replay_engine::ReplayError as EngineError;

pyo3::create_exception!(
    _core,
    ReplayError,
    PyValueError,
    "A trace that cannot be replayed: `kind` (bad_trace, bad_config, deadlock, collective, placement, interrupted), \
     `trace`, `row`, `blocked` (dicts of trace, rank, row, waiting_for), `total_blocked`, \
     `unmatched`."
);

pub fn replay_error(e: EngineError) -> PyErr {
    Python::with_gil(|py| {
        let err = ReplayError::new_err(e.to_string());
        if let Err(setting) = set_fields(py, err.value(py), &e) {
            return setting;
        }
        err
    })
}

fn set_fields(
    py: Python<'_>,
    v: &Bound<'_, pyo3::exceptions::PyBaseException>,
    e: &EngineError,
) -> PyResult<()> {
    let (kind, trace, row) = match e {
        EngineError::BadTrace { trace, row, .. } => ("bad_trace", Some(*trace), *row),
        EngineError::BadConfig(_) => ("bad_config", None, None),
        EngineError::Deadlock { .. } => ("deadlock", None, None),
        EngineError::Collective { trace, row, .. } => ("collective", Some(*trace), Some(*row)),
        EngineError::Placement(_) => ("placement", None, None),
        EngineError::Interrupted => ("interrupted", None, None),
    };
    v.setattr("kind", kind)?;
    v.setattr("trace", trace)?;
    v.setattr("row", row)?;
    let (blocked, total, unmatched) = match e {
        EngineError::Deadlock {
            blocked,
            total_blocked,
            unmatched,
        } => {
            let list = blocked
                .iter()
                .map(|b| {
                    let d = PyDict::new(py);
                    d.set_item("trace", b.trace)?;
                    d.set_item("rank", b.rank)?;
                    d.set_item("row", b.row)?;
                    d.set_item("waiting_for", &b.waiting_for)?;
                    Ok(d)
                })
                .collect::<PyResult<Vec<_>>>()?;
            (list, *total_blocked, unmatched.clone())
        }
        _ => (Vec::new(), 0, Vec::new()),
    };
    v.setattr("blocked", blocked)?;
    v.setattr("total_blocked", total)?;
    v.setattr("unmatched", unmatched)?;
    Ok(())
}
