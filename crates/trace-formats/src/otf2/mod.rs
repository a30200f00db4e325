//! A memory-safe reader of OTF2 (Score-P) archives for the records tailcast converts:
//! `read_archive` gives the definitions and the events, which tailcast.traces.otf2_import
//! turns into trace rows. Every length and count read from a file is checked against the
//! bytes that remain, nothing is allocated by a size a file states, and every loop consumes
//! bytes: a damaged archive ends in an error naming the file, the byte offset and what was
//! expected there.

mod anchor;
mod archive;
mod chunks;
mod clock;
mod cursor;
mod definitions;
mod error;
mod events;
mod local_defs;

pub use archive::{read_archive, Archive};
pub use definitions::{Comm, GlobalDefs, Group, Location};
pub use error::Otf2Error;
pub use events::Event;
