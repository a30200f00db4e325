//! An OTF2 archive on disk (OTF2 documentation, "OTF2 archive layout"): the anchor file
//! `<name>.otf2`, the global definitions `<name>.def`, and the directory `<name>/` with
//! one event file `<location id>.evt` per location and, optionally, its local
//! definitions `<location id>.def`. Files are read whole: each decoded value then comes
//! from bytes the file holds, and memory stays within the archive's size.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};

use super::anchor::read_anchor;
use super::definitions::{read_global_defs, GlobalDefs};
use super::error::Otf2Error;
use super::events::{read_events, Event};
use super::local_defs::{read_local_defs, LocalDefs};

/// An archive's definitions and its events of every location, merged in time order.
pub struct Archive {
    pub defs: GlobalDefs,
    /// (index into `defs.locations`, event): by time, ties by location order, then by
    /// file order — the order of the C library's global event reader for distinct times.
    pub events: Vec<(usize, Event)>,
}

fn read_file(path: &Path) -> Result<Vec<u8>, Otf2Error> {
    std::fs::read(path)
        .map_err(|e| Otf2Error::new(&path.display().to_string(), 0, format!("cannot read: {e}")))
}

pub fn read_archive(anchor_path: &Path) -> Result<Archive, Otf2Error> {
    let name = |p: &PathBuf| p.display().to_string();
    let anchor_file = anchor_path.to_path_buf();
    let anchor = read_anchor(&name(&anchor_file), &read_file(&anchor_file)?)?;
    let defs_file = anchor_path.with_extension("def");
    let defs_name = name(&defs_file);
    let defs = read_global_defs(&defs_name, &read_file(&defs_file)?, anchor.def_chunk_size)?;
    if defs.clock.is_none() {
        return Err(Otf2Error::new(
            &defs_name,
            0,
            "no ClockProperties definition",
        ));
    }
    let dir = anchor_path.with_extension("");
    let mut per_location = Vec::with_capacity(defs.locations.len());
    for location in &defs.locations {
        let local_file = dir.join(format!("{}.def", location.id));
        let mut local = if local_file.is_file() {
            read_local_defs(
                &name(&local_file),
                &read_file(&local_file)?,
                anchor.def_chunk_size,
            )?
        } else {
            LocalDefs::default() // writers leave it out when there is nothing to map
        };
        let events_file = dir.join(format!("{}.evt", location.id));
        let bytes = read_file(&events_file)?;
        per_location.push(read_events(
            &name(&events_file),
            &bytes,
            anchor.event_chunk_size,
            &mut local,
        )?);
    }
    Ok(Archive {
        events: merged(per_location),
        defs,
    })
}

/// The locations' event lists merged by time (a k-way merge; each step takes one event).
fn merged(per_location: Vec<Vec<Event>>) -> Vec<(usize, Event)> {
    let total = per_location.iter().map(Vec::len).sum();
    let mut out = Vec::with_capacity(total);
    let mut heads: BinaryHeap<Reverse<(u64, usize, usize)>> = per_location
        .iter()
        .enumerate()
        .filter_map(|(loc, evs)| evs.first().map(|e| Reverse((e.time, loc, 0))))
        .collect();
    while let Some(Reverse((_, loc, i))) = heads.pop() {
        out.push((loc, per_location[loc][i]));
        if let Some(next) = per_location[loc].get(i + 1) {
            heads.push(Reverse((next.time, loc, i + 1)));
        }
    }
    out
}
