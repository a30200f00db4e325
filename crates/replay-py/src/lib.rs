//! pyo3 binding: exposes replay-engine to Python as `tailcast._core`.
//! Only conversions live here; all semantics are in the engine crate.

mod column_builder;
mod config;
mod declared_comms;
mod errors;
mod ingest;
mod lists;
mod op_names;
mod op_stats;
mod otf2;
mod poll;
mod queue;
mod result;
mod scenario;
mod schedule;
mod source;
mod stream;
mod time;
mod tit;
mod tit_convert;
mod trace_file;
mod trace_scan;

use numpy::{Element, PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use replay_engine::trace::Lists;
use replay_engine::TraceColumns;
use result::{JobReplay, ReplayResult};

/// Version of the Rust replay engine.
#[pyfunction]
fn engine_version() -> &'static str {
    replay_engine::engine_version()
}

/// The operation code table: trace op name → code (u8) the engine reads.
#[pyfunction]
fn op_codes() -> std::collections::HashMap<&'static str, u8> {
    replay_engine::ops::OP_TABLE
        .iter()
        .map(|&(name, op)| (name, op as u8))
        .collect()
}

/// Borrowed numpy columns of one trace.
struct Columns<'py> {
    rank: PyReadonlyArray1<'py, u32>,
    seq: PyReadonlyArray1<'py, i64>,
    op: PyReadonlyArray1<'py, u8>,
    peer: PyReadonlyArray1<'py, i32>,
    root: PyReadonlyArray1<'py, i32>,
    send_bytes: PyReadonlyArray1<'py, i64>,
    recv_bytes: PyReadonlyArray1<'py, i64>,
    tag: PyReadonlyArray1<'py, i32>,
    comm: PyReadonlyArray1<'py, i32>,
    request: PyReadonlyArray1<'py, i64>,
    t_start_ns: PyReadonlyArray1<'py, i64>,
    t_end_ns: PyReadonlyArray1<'py, i64>,
    iteration: PyReadonlyArray1<'py, i32>,
    recv_peer: PyReadonlyArray1<'py, i32>,
    recv_tag: PyReadonlyArray1<'py, i32>,
    comm_ids: Option<PyReadonlyArray1<'py, i32>>,
    /// Bytes per element and op commutativity per row (absent: not recorded).
    dtype_bytes: Option<PyReadonlyArray1<'py, i32>>,
    commutative: Option<PyReadonlyArray1<'py, i32>>,
    /// (offsets, values) of requests, send_counts, recv_counts, comm_members.
    lists: Vec<Option<(PyReadonlyArray1<'py, i64>, PyReadonlyArray1<'py, i64>)>>,
}

const LIST_COLUMNS: [&str; 4] = ["requests", "send_counts", "recv_counts", "comm_members"];

fn optional<'py, T: Element>(
    d: &Bound<'py, PyDict>,
    key: &str,
    dtype: &str,
) -> PyResult<Option<PyReadonlyArray1<'py, T>>> {
    if d.contains(key)? {
        column(d, key, dtype).map(Some)
    } else {
        Ok(None)
    }
}

fn slice<'a, T: Element>(a: &'a Option<PyReadonlyArray1<'_, T>>) -> PyResult<&'a [T]> {
    match a {
        Some(a) => Ok(a.as_slice()?),
        None => Ok(&[]),
    }
}

fn column<'py, T: Element>(
    d: &Bound<'py, PyDict>,
    key: &str,
    dtype: &str,
) -> PyResult<PyReadonlyArray1<'py, T>> {
    let value = d
        .get_item(key)?
        .ok_or_else(|| PyValueError::new_err(format!("trace column {key} is missing")))?;
    let array: PyReadonlyArray1<'py, T> = value.extract().map_err(|_| {
        PyValueError::new_err(format!(
            "trace column {key} must be a 1-D numpy array of {dtype}"
        ))
    })?;
    if !array.is_contiguous() {
        return Err(PyValueError::new_err(format!(
            "trace column {key} must be contiguous"
        )));
    }
    Ok(array)
}

impl<'py> Columns<'py> {
    fn from_dict(d: &Bound<'py, PyDict>) -> PyResult<Self> {
        Ok(Self {
            rank: column(d, "rank", "uint32")?,
            seq: column(d, "seq", "int64")?,
            op: column(d, "op", "uint8")?,
            peer: column(d, "peer", "int32")?,
            root: column(d, "root", "int32")?,
            send_bytes: column(d, "send_bytes", "int64")?,
            recv_bytes: column(d, "recv_bytes", "int64")?,
            tag: column(d, "tag", "int32")?,
            comm: column(d, "comm", "int32")?,
            request: column(d, "request", "int64")?,
            t_start_ns: column(d, "t_start_ns", "int64")?,
            t_end_ns: column(d, "t_end_ns", "int64")?,
            iteration: column(d, "iteration", "int32")?,
            recv_peer: column(d, "recv_peer", "int32")?,
            recv_tag: column(d, "recv_tag", "int32")?,
            comm_ids: optional(d, "comm_ids", "int32")?,
            dtype_bytes: optional(d, "dtype_bytes", "int32")?,
            commutative: optional(d, "commutative", "int32")?,
            lists: LIST_COLUMNS
                .iter()
                .map(|name| {
                    let offsets = optional(d, &format!("{name}_offsets"), "int64")?;
                    let values = optional(d, &format!("{name}_values"), "int64")?;
                    Ok(offsets.zip(values))
                })
                .collect::<PyResult<_>>()?,
        })
    }

    fn view(&self) -> PyResult<TraceColumns<'_>> {
        Ok(TraceColumns {
            rank: self.rank.as_slice()?,
            seq: self.seq.as_slice()?,
            op: self.op.as_slice()?,
            peer: self.peer.as_slice()?,
            root: self.root.as_slice()?,
            send_bytes: self.send_bytes.as_slice()?,
            recv_bytes: self.recv_bytes.as_slice()?,
            tag: self.tag.as_slice()?,
            comm: self.comm.as_slice()?,
            request: self.request.as_slice()?,
            t_start_ns: self.t_start_ns.as_slice()?,
            t_end_ns: self.t_end_ns.as_slice()?,
            iteration: self.iteration.as_slice()?,
            recv_peer: self.recv_peer.as_slice()?,
            recv_tag: self.recv_tag.as_slice()?,
            requests: self.list(0)?,
            send_counts: self.list(1)?,
            recv_counts: self.list(2)?,
            comm_ids: slice(&self.comm_ids)?,
            dtype_bytes: slice(&self.dtype_bytes)?,
            commutative: slice(&self.commutative)?,
            comm_members: self.list(3)?,
        })
    }

    fn list(&self, i: usize) -> PyResult<Lists<'_>> {
        match &self.lists[i] {
            Some((o, v)) => Ok(Lists {
                offsets: o.as_slice()?,
                values: v.as_slice()?,
            }),
            None => Ok(Lists::default()),
        }
    }
}

/// Replays a scenario with its traces; see tailcast/_core.pyi for the contract.
#[pyfunction]
#[pyo3(signature = (scenario, traces, *, progress = None))]
fn replay<'py>(
    py: Python<'py>,
    scenario: &scenario::Scenario,
    traces: Vec<Bound<'py, PyDict>>,
    progress: Option<Py<PyAny>>,
) -> PyResult<ReplayResult> {
    let scenario = &scenario.inner;
    if traces.len() != scenario.jobs.len() {
        return Err(PyValueError::new_err(format!(
            "{} traces for a scenario of {}",
            traces.len(),
            scenario.jobs.len()
        )));
    }
    let columns: Vec<Columns<'py>> = traces
        .iter()
        .map(Columns::from_dict)
        .collect::<PyResult<_>>()?;
    let views = columns
        .iter()
        .map(Columns::view)
        .collect::<PyResult<Vec<TraceColumns<'_>>>>()?;
    let foreground_rows: u64 = views
        .iter()
        .zip(&scenario.jobs)
        .filter(|(_, j)| j.foreground)
        .map(|(v, _)| v.len() as u64)
        .sum();
    let mut poll = poll::Poll::new(progress);
    let out = py.allow_threads(|| {
        let mut interrupted = |fed| poll.interrupted(fed);
        replay_engine::replay_scenario(scenario, &views, &mut interrupted)
    });
    match out {
        Ok(out) => {
            // The last rows were fed after the last look: the callback hears of them now.
            poll.report(py, foreground_rows)?;
            ReplayResult::new(py, out)
        }
        // The exception the signal handler raised (KeyboardInterrupt, …), not a ReplayError.
        Err(replay_engine::ReplayError::Interrupted) => Err(poll
            .raised
            .take()
            .unwrap_or_else(|| errors::replay_error(replay_engine::ReplayError::Interrupted))),
        Err(err) => Err(errors::replay_error(err)),
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(engine_version, m)?)?;
    m.add_function(wrap_pyfunction!(op_codes, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(queue::squeue_columns, m)?)?;
    m.add_function(wrap_pyfunction!(trace_file::parquet_footer, m)?)?;
    m.add_function(wrap_pyfunction!(config::fabric_models, m)?)?;
    m.add_function(wrap_pyfunction!(scenario::fabric_work, m)?)?;
    m.add_function(wrap_pyfunction!(schedule::collective_program, m)?)?;
    m.add_function(wrap_pyfunction!(schedule::collective_algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(schedule::check_coll, m)?)?;
    m.add_function(wrap_pyfunction!(otf2::read_otf2, m)?)?;
    m.add("ReplayError", m.py().get_type::<errors::ReplayError>())?;
    m.add(
        "FabricConfigError",
        m.py().get_type::<config::FabricConfigError>(),
    )?;
    m.add_class::<scenario::FabricSpec>()?;
    m.add_class::<scenario::Scenario>()?;
    m.add_class::<JobReplay>()?;
    m.add_class::<ReplayResult>()?;
    m.add_class::<stream::ReplayStream>()?;
    m.add_class::<column_builder::ColumnBuilder>()?;
    m.add_class::<trace_scan::TraceScan>()?;
    m.add_class::<trace_file::TraceFile>()?;
    m.add_class::<op_stats::OpStats>()?;
    m.add_class::<tit::TitReader>()?;
    m.add_class::<tit_convert::TitConverter>()?;
    m.add_class::<trace_file::RankFeeder>()?;
    Ok(())
}
