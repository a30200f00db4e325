//! Replay results as Python objects: `JobReplay` per trace and `ReplayResult` for a whole
//! replay (counters, fabric statistics, message rows).

use std::collections::HashMap;

use numpy::{Element, IntoPyArray, PyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use replay_engine::{JobResult, MessagesOut, ReplayOutput, ReplayStats};

use crate::time::to_ns;

/// Replay results of one trace (times in ns from the start of the replay). The per-row
/// columns become numpy arrays when first read: a streamed replay (its rows went out
/// through `ReplayStream.take_ops`) never reads them, so it needs no numpy; iterations are
/// few, and come as lists.
#[pyclass(module = "tailcast._core")]
pub struct JobReplay {
    sim_start_ns: Column<i64>,
    sim_end_ns: Column<i64>,
    endpoints: Column<u32>,
    #[pyo3(get)]
    pub iterations: Vec<i32>,
    #[pyo3(get)]
    pub iteration_latency_ns: Vec<f64>,
    /// Per iteration, the mean over ranks of each rank's own span (max: the column above).
    #[pyo3(get)]
    pub iteration_mean_ns: Vec<f64>,
    #[pyo3(get)]
    pub total_time_ns: f64,
    #[pyo3(get)]
    pub unfinished_ranks: u32,
}

/// A column kept as the engine gave it until Python reads it, then as that numpy array.
enum Column<T: Element> {
    Rows(Vec<T>),
    Array(Py<PyArray1<T>>),
}

impl<T: Element> Column<T> {
    fn array<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyArray1<T>> {
        let array = match std::mem::replace(self, Self::Rows(Vec::new())) {
            Self::Rows(rows) => rows.into_pyarray(py).unbind(),
            Self::Array(array) => array,
        };
        let out = array.bind(py).clone();
        *self = Self::Array(array);
        out
    }
}

impl JobReplay {
    fn new(r: JobResult) -> Self {
        Self {
            sim_start_ns: Column::Rows(to_ns(r.sim_start_ns)),
            sim_end_ns: Column::Rows(to_ns(r.sim_end_ns)),
            endpoints: Column::Rows(r.endpoints),
            iterations: r.iterations,
            iteration_latency_ns: r.iteration_latency_ns,
            iteration_mean_ns: r.iteration_mean_ns,
            total_time_ns: r.total_time_ns,
            unfinished_ranks: r.unfinished_ranks,
        }
    }
}

#[pymethods]
impl JobReplay {
    #[getter]
    fn sim_start_ns<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        self.sim_start_ns.array(py)
    }

    #[getter]
    fn sim_end_ns<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        self.sim_end_ns.array(py)
    }

    #[getter]
    fn endpoints<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        self.endpoints.array(py)
    }
}

/// A whole replay: its traces' results and what the fabric and engine counted.
#[pyclass(frozen, module = "tailcast._core")]
pub struct ReplayResult {
    #[pyo3(get)]
    pub jobs: Vec<Py<JobReplay>>,
    #[pyo3(get)]
    pub stats: HashMap<&'static str, u64>,
    #[pyo3(get)]
    pub fabric_stats: Vec<(String, f64)>,
    /// Column name → numpy array, one row per delivered message; None when not recorded.
    #[pyo3(get)]
    pub messages: Option<Py<PyDict>>,
    #[pyo3(get)]
    pub path_classes: Vec<&'static str>,
    /// The endpoints of each background job, where the scenario placed them.
    #[pyo3(get)]
    pub background_endpoints: Vec<Vec<u32>>,
}

impl ReplayResult {
    pub fn new(py: Python<'_>, out: ReplayOutput) -> PyResult<Self> {
        let jobs = out
            .jobs
            .into_iter()
            .map(|r| Py::new(py, JobReplay::new(r)))
            .collect::<PyResult<_>>()?;
        let messages = out
            .messages
            .map(|m| messages_dict(py, m).map(Bound::unbind))
            .transpose()?;
        Ok(Self {
            jobs,
            stats: stats_map(&out.stats),
            fabric_stats: out.fabric_stats,
            messages,
            path_classes: out.path_classes.to_vec(),
            background_endpoints: out.background_endpoints,
        })
    }
}

fn messages_dict(py: Python<'_>, m: MessagesOut) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("job", m.job.into_pyarray(py))?;
    d.set_item("src_rank", m.src_rank.into_pyarray(py))?;
    d.set_item("send_seq", m.send_seq.into_pyarray(py))?;
    d.set_item("dst_rank", m.dst_rank.into_pyarray(py))?;
    d.set_item("bytes", m.bytes.into_pyarray(py))?;
    d.set_item("kind", m.kind.into_pyarray(py))?;
    d.set_item("collective", m.collective.into_pyarray(py))?;
    d.set_item("tag", m.tag.into_pyarray(py))?;
    d.set_item("posted_ns", to_ns(m.posted_ns).into_pyarray(py))?;
    d.set_item("delivered_ns", to_ns(m.delivered_ns).into_pyarray(py))?;
    d.set_item("setup_ns", m.setup_ns.into_pyarray(py))?;
    d.set_item("wait_ns", m.wait_ns.into_pyarray(py))?;
    d.set_item("blocked", m.blocked.into_pyarray(py))?;
    d.set_item("hops", m.hops.into_pyarray(py))?;
    d.set_item("path", m.path.into_pyarray(py))?;
    Ok(d)
}

/// The engine's counters as the dict Python receives.
pub fn stats_map(s: &ReplayStats) -> HashMap<&'static str, u64> {
    [
        ("actions", s.actions),
        ("messages", s.messages),
        ("events", s.events),
        ("background_messages", s.background_messages),
        ("background_delivered", s.background_delivered),
        ("background_bytes", s.background_bytes),
        ("background_delivered_bytes", s.background_delivered_bytes),
    ]
    .into_iter()
    .collect()
}
