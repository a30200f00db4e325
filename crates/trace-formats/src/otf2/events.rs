//! A location's event file (`traces/<location>.evt`): the MPI records tailcast converts
//! (OTF2 source: OTF2_EvtReader.c and OTF2_EvtReader_inc.c; record ids and fields from
//! otf2_events_int.h).
//!
//! A timestamp record (OTF2_BUFFER_TIMESTAMP, 5, then 8 bytes) precedes the events that
//! happened at a new time; events without one share the previous time. An attribute list
//! (OTF2_ATTRIBUTE_LIST, 6) may precede an event and is skipped by its length. The
//! "singleton" events of OTF2 1.1 (Enter, Leave, MpiIsendComplete, MpiIrecvRequest, …:
//! `otf2_evt_reader_skip`) are one compressed integer with no record length; every other
//! event has a record length, by which the fields a newer OTF2 appends are skipped.

use super::chunks::Chunks;
use super::cursor::Cursor;
use super::error::Otf2Error;
use super::local_defs::{LocalDefs, MAPPING_COMM, MAPPING_REGION};

const TIMESTAMP: u8 = 5;
const ATTRIBUTE_LIST: u8 = 6;
pub const ENTER: u8 = 12;
pub const LEAVE: u8 = 13;
pub const MPI_SEND: u8 = 14;
pub const MPI_ISEND: u8 = 15;
pub const MPI_ISEND_COMPLETE: u8 = 16;
pub const MPI_IRECV_REQUEST: u8 = 17;
pub const MPI_RECV: u8 = 18;
pub const MPI_IRECV: u8 = 19;
const MPI_REQUEST_TEST: u8 = 20;
const MPI_REQUEST_CANCELLED: u8 = 21;
pub const MPI_COLLECTIVE_END: u8 = 23;
const OMP_FORK: u8 = 24;
const OMP_TASK_CREATE: u8 = 28;
const OMP_TASK_SWITCH: u8 = 29;
const OMP_TASK_COMPLETE: u8 = 30;
/// Record ids below 10 are the buffer's own (OTF2_Buffer.h); past the chunk layer only
/// the timestamp and attribute list may appear.
const FIRST_EVENT_ID: u8 = 10;

/// One event tailcast converts. Fields by kind (OTF2's order):
/// Enter/Leave: region; MpiSend/MpiRecv: peer, communicator, tag, length;
/// MpiIsend/MpiIrecv: the same and the request id; MpiIsendComplete/MpiIrecvRequest:
/// request id; MpiCollectiveEnd: collective op, communicator, root, bytes sent, received.
/// Region and communicator ids are global (the location's mapping tables applied), the
/// time corrected by its clock offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub time: u64,
    pub kind: u8,
    pub fields: [u64; 5],
}

pub fn read_events(
    file: &str,
    bytes: &[u8],
    chunk_size: usize,
    local: &mut LocalDefs,
) -> Result<Vec<Event>, Otf2Error> {
    let mut chunks = Chunks::open(file, bytes, chunk_size)?;
    let maps = &local.maps;
    let map = |kind: u8, id: u64| maps.get(&kind).map_or(id, |m| m.global(id));
    let mut time = 0u64;
    // Every event kept took at least 2 bytes of the file: memory stays within its size.
    let mut events = Vec::new();
    while let Some(kind) = chunks.next_type()? {
        let c = &mut chunks.cursor;
        let mut fields = [0u64; 5];
        match kind {
            TIMESTAMP => {
                time = c.u64_full("timestamp")?;
                continue;
            }
            ATTRIBUTE_LIST => {
                c.record("attribute list")?;
                continue;
            }
            ENTER | LEAVE => fields[0] = map(MAPPING_REGION, u64::from(c.u32("region")?)),
            MPI_ISEND_COMPLETE | MPI_IRECV_REQUEST => fields[0] = c.u64("request id")?,
            MPI_REQUEST_TEST
            | MPI_REQUEST_CANCELLED
            | OMP_FORK
            | OMP_TASK_CREATE
            | OMP_TASK_SWITCH
            | OMP_TASK_COMPLETE => {
                c.u64("singleton event field")?;
                continue;
            }
            MPI_SEND | MPI_RECV | MPI_ISEND | MPI_IRECV => {
                let mut r = c.record("MPI point-to-point event")?;
                fields[0] = u64::from(r.u32("peer rank")?);
                fields[1] = map(MAPPING_COMM, u64::from(r.u32("communicator")?));
                fields[2] = u64::from(r.u32("tag")?);
                fields[3] = r.u64("message length")?;
                if matches!(kind, MPI_ISEND | MPI_IRECV) {
                    fields[4] = r.u64("request id")?;
                }
            }
            MPI_COLLECTIVE_END => {
                fields = collective_end(&mut c.record("MpiCollectiveEnd")?, &map)?
            }
            k if k >= FIRST_EVENT_ID => {
                c.record("event record")?; // an event tailcast does not convert
                continue;
            }
            other => return Err(c.error(format!("record type {other} is not an event"))),
        }
        events.push(Event {
            time: local.clock.apply(time),
            kind,
            fields,
        });
    }
    Ok(events)
}

fn collective_end(
    r: &mut Cursor<'_>,
    map: &impl Fn(u8, u64) -> u64,
) -> Result<[u64; 5], Otf2Error> {
    Ok([
        u64::from(r.u8("collective op")?),
        map(MAPPING_COMM, u64::from(r.u32("communicator")?)),
        u64::from(r.u32("root")?),
        r.u64("bytes sent")?,
        r.u64("bytes received")?,
    ])
}
