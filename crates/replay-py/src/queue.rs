//! `squeue_columns`: queue-scan's columns of `squeue --json` output as Python lists.
//! Only conversions live here; the field rules are in the queue-scan crate.

use std::collections::HashMap;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

/// One Python object per distinct value: a queue repeats a few states and users
/// thousands of times, and immutable str/tuple objects can be shared.
struct Shared<'py, K> {
    py: Python<'py>,
    seen: HashMap<K, Bound<'py, PyAny>>,
}

impl<'py, K: std::hash::Hash + Eq> Shared<'py, K> {
    fn new(py: Python<'py>) -> Self {
        Self {
            py,
            seen: HashMap::new(),
        }
    }

    fn get(
        &mut self,
        key: K,
        make: impl FnOnce(Python<'py>) -> PyResult<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Some(obj) = self.seen.get(&key) {
            return Ok(obj.clone());
        }
        let obj = make(self.py)?;
        self.seen.insert(key, obj.clone());
        Ok(obj)
    }
}

fn optional_strings<'py>(
    py: Python<'py>,
    values: &[Option<String>],
    share: bool,
) -> PyResult<Bound<'py, PyList>> {
    let mut shared = Shared::new(py);
    let items = values
        .iter()
        .map(|v| match v {
            None => Ok(py.None().into_bound(py)),
            Some(s) if share => shared.get(s.as_str(), |py| Ok(PyString::new(py, s).into_any())),
            Some(s) => Ok(PyString::new(py, s).into_any()),
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// Scans `squeue --json` output without holding the GIL; see tailcast/_core.pyi.
#[pyfunction]
pub fn squeue_columns<'py>(py: Python<'py>, data: PyBackedBytes) -> PyResult<Bound<'py, PyDict>> {
    let scan = py
        .allow_threads(|| queue_scan::scan(&data))
        .map_err(|err| PyValueError::new_err(err.to_string()))?;
    let jobs = &scan.jobs;
    let out = PyDict::new(py);
    out.set_item("job_id", PyList::new(py, &jobs.job_id)?)?;
    out.set_item("array_job_id", PyList::new(py, &jobs.array_job_id)?)?;
    out.set_item("array_task_id", PyList::new(py, &jobs.array_task_id)?)?;
    let mut tuples = Shared::new(py);
    let states = jobs
        .job_state
        .iter()
        .map(|s| tuples.get(s.as_slice(), |py| Ok(PyTuple::new(py, s)?.into_any())))
        .collect::<PyResult<Vec<_>>>()?;
    out.set_item("job_state", PyList::new(py, states)?)?;
    out.set_item("nodes", optional_strings(py, &jobs.nodes, false)?)?;
    out.set_item("node_count", PyList::new(py, &jobs.node_count)?)?;
    out.set_item("user_name", optional_strings(py, &jobs.user_name, true)?)?;
    out.set_item("user_id", PyList::new(py, &jobs.user_id)?)?;
    let problems = scan
        .problems
        .iter()
        .map(|p| (p.index, p.line, p.kind.to_string()));
    out.set_item("problems", PyList::new(py, problems)?)?;
    out.set_item("release", PyList::new(py, &scan.release)?)?;
    out.set_item("cluster", PyList::new(py, &scan.cluster)?)?;
    out.set_item("errors", PyList::new(py, &scan.errors)?)?;
    Ok(out)
}
