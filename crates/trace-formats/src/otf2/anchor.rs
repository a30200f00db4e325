//! The anchor file (`traces.otf2`): the archive's layout (OTF2 source: OTF2_AnchorFile.c,
//! `OTF2_AnchorFile_Load`). Its fields, after a 2-byte header (OTF2_BUFFER_CHUNK_HEADER
//! and the byte order marker): the magic string "OTF2", the anchor format, the trace
//! format, the OTF2 version (3 bytes), the event and definition chunk sizes (8 bytes
//! each), the file substrate, the compression, the numbers of locations and of global
//! definitions (8 bytes each), machine, creator and description strings; from anchor
//! format 2 on, properties (a 4-byte count, then name and value strings) and an 8-byte
//! trace id; from format 3 on, 4-byte counts of snapshots and thumbnails, then
//! OTF2_BUFFER_END_OF_FILE.

use super::cursor::{ByteOrder, Cursor};
use super::error::Otf2Error;

/// OTF2_CHUNK_SIZE_MIN and OTF2_CHUNK_SIZE_MAX (otf2/OTF2_GeneralDefinitions.h: 256 KiB
/// and 16 MiB): the chunk sizes a writer accepts.
const CHUNK_SIZE_MIN: u64 = 256 << 10;
const CHUNK_SIZE_MAX: u64 = 16 << 20;
/// OTF2_SUBSTRATE_POSIX: one file per location; SION containers are not read here.
const SUBSTRATE_POSIX: u8 = 1;
/// OTF2_COMPRESSION_NONE: zlib-compressed archives are not read here.
const COMPRESSION_NONE: u8 = 1;
/// The anchor format that ends with OTF2_BUFFER_END_OF_FILE (OTF2_ANCHOR_FORMAT).
const ANCHOR_FORMAT_WITH_END: u8 = 3;
const END_OF_FILE: u8 = 2;

/// What reading the rest of the archive needs from its anchor file.
#[derive(Debug)]
pub struct Anchor {
    pub event_chunk_size: usize,
    pub def_chunk_size: usize,
}

pub fn read_anchor(file: &str, bytes: &[u8]) -> Result<Anchor, Otf2Error> {
    let mut c = Cursor::new(file, bytes);
    let header = c.u8("anchor header")?;
    if header != 3 {
        return Err(c.error_at(
            0,
            format!("expected the anchor header byte 3, found {header}"),
        ));
    }
    let order = c.u8("anchor byte order")?;
    c.order = ByteOrder::from_marker(order)
        .ok_or_else(|| c.error_at(1, format!("unknown byte order marker {order:#04x}")))?;
    let magic_at = c.pos();
    if c.string("magic")? != "OTF2" {
        return Err(c.error_at(
            magic_at,
            "magic string \"OTF2\" missing: not an OTF2 anchor file",
        ));
    }
    let format = c.u8("anchor format")?;
    if format == 0 {
        return Err(c.error_at(magic_at + 5, "anchor format 0"));
    }
    c.u8("trace format")?;
    for part in ["major", "minor", "bugfix"] {
        c.u8(&format!("OTF2 {part} version"))?;
    }
    let event_chunk_size = chunk_size(&mut c, "event chunk size")?;
    let def_chunk_size = chunk_size(&mut c, "definition chunk size")?;
    let at = c.pos();
    let substrate = c.u8("file substrate")?;
    if substrate != SUBSTRATE_POSIX {
        return Err(c.error_at(
            at,
            format!("file substrate {substrate} not supported (only POSIX files, 1)"),
        ));
    }
    let at = c.pos();
    let compression = c.u8("compression")?;
    if compression != COMPRESSION_NONE {
        return Err(c.error_at(
            at,
            format!("compression {compression} not supported (only uncompressed, 1)"),
        ));
    }
    c.u64_full("number of locations")?;
    c.u64_full("number of global definitions")?;
    for what in ["machine name", "creator", "description"] {
        c.string(what)?;
    }
    if format > 1 {
        let properties = c.u32_full("number of properties")?;
        // Each property is two strings of at least their NUL each: a damaged count ends
        // at the file's end, not in a long loop.
        for _ in 0..properties {
            c.string("property name")?;
            c.string("property value")?;
        }
        c.u64_full("trace id")?;
    }
    if format > 2 {
        c.u32_full("number of snapshots")?;
        c.u32_full("number of thumbnails")?;
    }
    if format == ANCHOR_FORMAT_WITH_END {
        let at = c.pos();
        let end = c.u8("end of file marker")?;
        if end != END_OF_FILE {
            return Err(c.error_at(
                at,
                format!("expected the end of file marker 2, found {end}"),
            ));
        }
    }
    Ok(Anchor {
        event_chunk_size,
        def_chunk_size,
    })
}

fn chunk_size(c: &mut Cursor<'_>, what: &str) -> Result<usize, Otf2Error> {
    let at = c.pos();
    let size = c.u64_full(what)?;
    if !(CHUNK_SIZE_MIN..=CHUNK_SIZE_MAX).contains(&size) {
        return Err(c.error_at(
            at,
            format!("{what} {size} outside OTF2's {CHUNK_SIZE_MIN}..={CHUNK_SIZE_MAX} bytes"),
        ));
    }
    Ok(size as usize)
}
