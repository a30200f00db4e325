//! A location's local definitions file (`traces/<location>.def`): the mapping tables
//! from the location's local ids to global ones and its clock offsets (see clock.rs) (OTF2 source:
//! OTF2_DefReader_inc.c, record ids from otf2_local_definitions.h; OTF2_IdMap layout
//! from otf2_id_map.c, `otf2_id_map_read`). Other records are skipped by length.

use std::collections::HashMap;

use super::chunks::Chunks;
use super::clock::ClockCorrection;
use super::error::Otf2Error;

const MAPPING_TABLE: u8 = 5;
const CLOCK_OFFSET: u8 = 6;
/// OTF2_IdMapMode: dense maps list the global id of local ids 0, 1, …; sparse ones
/// list (local, global) pairs.
const ID_MAP_DENSE: u8 = 0;
const ID_MAP_SPARSE: u8 = 1;

/// OTF2_MappingType values (otf2/OTF2_Definitions.h) of the ids tailcast's events carry.
pub const MAPPING_REGION: u8 = 3;
pub const MAPPING_COMM: u8 = 6;

/// Local → global ids of one kind; ids it does not list stay as they are (as
/// OTF2_IdMap_GetGlobalId leaves them).
#[derive(Debug, Default)]
pub struct IdMap(HashMap<u64, u64>);

impl IdMap {
    pub fn global(&self, local: u64) -> u64 {
        self.0.get(&local).copied().unwrap_or(local)
    }
}

#[derive(Debug, Default)]
pub struct LocalDefs {
    pub maps: HashMap<u8, IdMap>,
    pub clock: ClockCorrection,
}

pub fn read_local_defs(
    file: &str,
    bytes: &[u8],
    chunk_size: usize,
) -> Result<LocalDefs, Otf2Error> {
    let mut chunks = Chunks::open(file, bytes, chunk_size)?;
    let mut defs = LocalDefs::default();
    while let Some(kind) = chunks.next_type()? {
        let mut r = chunks.cursor.record("local definition record")?;
        match kind {
            MAPPING_TABLE => {
                let mapping = r.u8("MappingTable type")?;
                let count = r.u64("MappingTable size")?;
                let at = r.pos();
                let mode = r.u8("MappingTable mode")?;
                // Entries are read one by one (no capacity from the count): each takes at
                // least one byte of the record, so a damaged count ends at its end.
                let mut map = HashMap::new();
                for local in 0..count {
                    match mode {
                        ID_MAP_DENSE => {
                            map.insert(local, r.u64("MappingTable entry")?);
                        }
                        ID_MAP_SPARSE => {
                            let from = r.u64("MappingTable local id")?;
                            map.insert(from, r.u64("MappingTable global id")?);
                        }
                        other => return Err(r.error_at(at, format!("unknown id map mode {other}"))),
                    }
                }
                defs.maps.insert(mapping, IdMap(map));
            }
            CLOCK_OFFSET => {
                let at = r.pos();
                let time = r.u64_full("ClockOffset time")?; // a timestamp: written in full
                let offset = r.i64("ClockOffset offset")?;
                defs.clock
                    .add(time, offset)
                    .map_err(|e| r.error_at(at, e))?;
            }
            _ => {}
        }
    }
    Ok(defs)
}
