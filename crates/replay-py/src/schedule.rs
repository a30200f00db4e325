//! `collective_program`: the per-rank point-to-point program the engine runs for one
//! collective (what `tailcast replay schedule` prints), straight from the engine's
//! generator (replay_engine::collectives::schedule) with Open MPI 4.1.4's algorithm choice.

use std::collections::BTreeMap;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use replay_engine::collectives::{names, schedule, CollKind, CollSpec, Instr, Program, Selector};

/// One step: (call, peer or -1, bytes, requests it waits on or posts in a window).
type Step = (String, i64, u64, Vec<u32>);

fn steps(prog: &Program) -> Vec<Step> {
    prog.instrs
        .iter()
        .map(|instr| match *instr {
            Instr::Send { peer, bytes, sync } => {
                let call = if sync { "issend" } else { "isend" };
                (call.to_string(), i64::from(peer), bytes, Vec::new())
            }
            Instr::Recv { peer, bytes } => {
                ("irecv".to_string(), i64::from(peer), bytes, Vec::new())
            }
            Instr::Wait { lo, hi } => ("wait".to_string(), -1, 0, prog.waited(lo, hi).to_vec()),
            Instr::Reduce { bytes } => ("reduce".to_string(), -1, bytes, Vec::new()),
            Instr::Window { lo, mid, hi, k } => {
                // the peers of the window's receives, then of its sends; k per side at once
                let peers = prog.window[lo as usize..hi as usize]
                    .iter()
                    .map(|w| w.0)
                    .collect();
                let bytes = prog.window[mid as usize..hi as usize]
                    .iter()
                    .map(|w| w.1)
                    .sum();
                (
                    format!("window(k={k}, receives={})", mid - lo),
                    -1,
                    bytes,
                    peers,
                )
            }
        })
        .collect()
}

/// (algorithm name, segsize, fanout, max_requests, radix, one step list per rank) of
/// `coll` ("bcast" for the fixed rules, or "bcast=pipeline:segsize=128K") at `ranks` ranks.
#[pyfunction]
#[pyo3(signature = (coll, ranks, size_bytes, root=0, dtype_bytes=1, commutative=true))]
#[allow(clippy::type_complexity)]
pub fn collective_program(
    coll: &str,
    ranks: u32,
    size_bytes: u64,
    root: u32,
    dtype_bytes: u32,
    commutative: bool,
) -> PyResult<(String, u64, u32, u32, u32, Vec<Vec<Step>>)> {
    let (kind_name, forced) = coll.split_once('=').unwrap_or((coll, ""));
    let kind: CollKind = names::kind_from_name(kind_name)
        .ok_or_else(|| PyValueError::new_err(format!("unknown collective '{kind_name}'")))?;
    if matches!(
        kind,
        CollKind::Alltoallv | CollKind::Allgatherv | CollKind::Gatherv | CollKind::Scatterv
    ) {
        return Err(PyValueError::new_err(format!(
            "{kind_name}: v-collectives need per-rank counts; schedule the non-v form"
        )));
    }
    let selector = if forced.is_empty() {
        Selector::fixed()
    } else {
        Selector::parse(coll).map_err(|e| PyValueError::new_err(e.to_string()))?
    };
    let mut spec = CollSpec::new(kind, ranks, root, size_bytes);
    spec.elem_bytes = dtype_bytes;
    spec.commutative = commutative;
    let (algo, params) = selector.select(&spec);
    let programs = (0..ranks)
        .map(|me| {
            schedule(&spec, algo, &params, me, &selector)
                .map(|p| steps(&p))
                .map_err(|e| PyValueError::new_err(e.to_string()))
        })
        .collect::<PyResult<Vec<_>>>()?;
    let name = format!("{algo:?}");
    Ok((
        name,
        params.segsize,
        params.fanout,
        params.max_requests,
        params.radix,
        programs,
    ))
}

/// Per collective a `--coll` override names, its algorithms in Open MPI id order (id =
/// index + 1) by the names the override takes.
#[pyfunction]
pub fn collective_algorithms() -> BTreeMap<&'static str, Vec<&'static str>> {
    names::OVERRIDABLE
        .iter()
        .map(|&(name, kind)| {
            let algos = names::algorithms(kind).iter();
            (name, algos.map(|&a| names::algo_name(a)).collect())
        })
        .collect()
}

/// Parses `--coll` text as a replay does; ValueError naming the collective, the bad name and
/// what the collective takes.
#[pyfunction]
pub fn check_coll(text: &str) -> PyResult<()> {
    Selector::parse(text)
        .map(|_| ())
        .map_err(|e| PyValueError::new_err(e.to_string()))
}
