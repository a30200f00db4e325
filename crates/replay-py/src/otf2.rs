//! `tailcast._core.read_otf2`: an OTF2 archive read by crates/trace-formats (`otf2`), its
//! definitions and events handed to Python, which tailcast.traces.otf2_import turns into
//! trace rows.

use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use trace_formats::otf2::read_archive;

/// The archive anchored at `path`: a dict of `clock` (timer resolution, global offset),
/// `strings` {id: text}, `location_groups` {id: name id}, `locations` [(id, group id)],
/// `regions` {id: name id}, `groups` [(id, type, paradigm, [members])], `comms`
/// [(id, name id, group id, parent id)] and `events` [(location index, record id, time,
/// f0..f4)] in time order. Errors: ValueError((file, byte offset, what was expected)).
#[pyfunction]
pub fn read_otf2<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyDict>> {
    let archive = py
        .allow_threads(|| read_archive(&path))
        .map_err(|e| PyValueError::new_err((e.file, e.offset, e.what)))?;
    let defs = &archive.defs;
    let out = PyDict::new(py);
    out.set_item("clock", defs.clock)?;
    out.set_item("strings", &defs.strings)?;
    out.set_item("location_groups", &defs.location_groups)?;
    out.set_item(
        "locations",
        defs.locations
            .iter()
            .map(|l| (l.id, l.group))
            .collect::<Vec<_>>(),
    )?;
    out.set_item("regions", &defs.regions)?;
    let groups = PyList::empty(py);
    for g in &defs.groups {
        groups.append((g.id, g.group_type, g.paradigm, g.members.clone()))?;
    }
    out.set_item("groups", groups)?;
    out.set_item(
        "comms",
        defs.comms
            .iter()
            .map(|c| (c.id, c.name, c.group, c.parent))
            .collect::<Vec<_>>(),
    )?;
    let events = PyList::empty(py);
    for (loc, e) in &archive.events {
        let f = e.fields;
        events.append((*loc, e.kind, e.time, f[0], f[1], f[2], f[3], f[4]))?;
    }
    out.set_item("events", events)?;
    Ok(out)
}
