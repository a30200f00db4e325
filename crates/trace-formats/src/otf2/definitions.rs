//! The global definitions file (`traces.def`): the records tailcast uses (OTF2 source:
//! OTF2_GlobalDefReader_inc.c, `otf2_global_def_reader_read_*`; record ids from
//! otf2_global_definitions.h). Each record is its type byte, its length
//! (OTF2_Buffer_GuaranteeRecord) and its fields; fields a newer OTF2 appends are skipped
//! by that length, as the C reader does, and so is every other record type.

use std::collections::HashMap;

use super::chunks::Chunks;
use super::cursor::Cursor;
use super::error::Otf2Error;

const CLOCK_PROPERTIES: u8 = 5;
const STRING: u8 = 10;
const LOCATION_GROUP: u8 = 13;
const LOCATION: u8 = 14;
const REGION: u8 = 15;
const GROUP: u8 = 18;
const COMM: u8 = 22;

/// OTF2_GroupType values (otf2/OTF2_Definitions.h).
pub const GROUP_TYPE_COMM_LOCATIONS: u8 = 4;
pub const GROUP_TYPE_COMM_GROUP: u8 = 5;
pub const GROUP_TYPE_COMM_SELF: u8 = 6;
/// OTF2_PARADIGM_MPI: the paradigm of groups written in the pre-1.2 layout with an MPI type.
const PARADIGM_MPI: u8 = 4;

#[derive(Debug, Default)]
pub struct Location {
    pub id: u64,
    pub group: u32,
}

#[derive(Debug, Default)]
pub struct Group {
    pub id: u32,
    pub group_type: u8,
    pub paradigm: u8,
    pub members: Vec<u64>,
}

#[derive(Debug, Default)]
pub struct Comm {
    pub id: u32,
    pub name: u32,
    pub group: u32,
    pub parent: u32,
}

/// The global definitions tailcast reads, in file order where order matters.
#[derive(Debug, Default)]
pub struct GlobalDefs {
    /// (timer resolution in ticks per second, global offset in ticks)
    pub clock: Option<(u64, u64)>,
    pub strings: HashMap<u32, String>,
    /// location group id → its name's string id
    pub location_groups: HashMap<u32, u32>,
    pub locations: Vec<Location>,
    /// region id → its name's string id
    pub regions: HashMap<u32, u32>,
    pub groups: Vec<Group>,
    pub comms: Vec<Comm>,
}

pub fn read_global_defs(
    file: &str,
    bytes: &[u8],
    chunk_size: usize,
) -> Result<GlobalDefs, Otf2Error> {
    let mut chunks = Chunks::open(file, bytes, chunk_size)?;
    let mut defs = GlobalDefs::default();
    while let Some(kind) = chunks.next_type()? {
        let mut r = chunks.cursor.record("definition record")?;
        match kind {
            CLOCK_PROPERTIES => {
                let resolution = r.u64("ClockProperties timer resolution")?;
                let offset = r.u64("ClockProperties global offset")?;
                defs.clock = Some((resolution, offset));
            }
            STRING => {
                let id = r.u32("String id")?;
                let text = r.string("String text")?;
                defs.strings.insert(id, text);
            }
            LOCATION_GROUP => {
                let id = r.u32("LocationGroup id")?;
                let name = r.u32("LocationGroup name")?;
                defs.location_groups.insert(id, name);
            }
            LOCATION => defs.locations.push(location(&mut r)?),
            REGION => {
                let id = r.u32("Region id")?;
                let name = r.u32("Region name")?;
                defs.regions.insert(id, name);
            }
            GROUP => defs.groups.push(group(&mut r)?),
            COMM => defs.comms.push(Comm {
                id: r.u32("Comm id")?,
                name: r.u32("Comm name")?,
                group: r.u32("Comm group")?,
                parent: r.u32("Comm parent")?,
            }),
            _ => {} // a record tailcast does not use: its length skipped it
        }
    }
    Ok(defs)
}

/// Location: id (64-bit), name, location type (1 byte), number of events, location group.
fn location(r: &mut Cursor<'_>) -> Result<Location, Otf2Error> {
    let id = r.u64("Location id")?;
    r.u32("Location name")?;
    r.u8("Location type")?;
    r.u64("Location number of events")?;
    let group = r.u32("Location group")?;
    Ok(Location { id, group })
}

/// Group: id, name, the pre-1.2 group type (1 byte), the member count and the members
/// (64-bit each); since OTF2 1.2 followed by the group type, the paradigm (1 byte each)
/// and the group flags. Records without those (older writers) get them from the
/// pre-1.2 type (OTF2_GroupTypePre12: 4 MPI group, 5 MPI_COMM_SELF, 6 MPI locations).
fn group(r: &mut Cursor<'_>) -> Result<Group, Otf2Error> {
    let id = r.u32("Group id")?;
    r.u32("Group name")?;
    let pre12 = r.u8("Group type (pre 1.2)")?;
    let count = r.u32("Group member count")?;
    // No capacity from the count: each member takes at least one byte of the record,
    // so a damaged count ends at the record's end.
    let mut members = Vec::new();
    for _ in 0..count {
        members.push(r.u64("Group member")?);
    }
    let (group_type, paradigm) = if r.remaining() > 0 {
        (r.u8("Group type")?, r.u8("Group paradigm")?)
    } else {
        match pre12 {
            4 => (GROUP_TYPE_COMM_GROUP, PARADIGM_MPI),
            5 => (GROUP_TYPE_COMM_SELF, PARADIGM_MPI),
            6 => (GROUP_TYPE_COMM_LOCATIONS, PARADIGM_MPI),
            other => (other, 0),
        }
    };
    Ok(Group {
        id,
        group_type,
        paradigm,
        members,
    })
}
