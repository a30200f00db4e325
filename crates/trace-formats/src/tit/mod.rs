//! SimGrid time-independent traces (TiT): one action per line, `<rank> <action>
//! [<arguments>]` (SimGrid 3.32 smpi_replay.cpp), in one file for every rank or one file per
//! rank. `Reader` parses a file into TRACE rows a chunk at a time; `Converter` writes a
//! whole trace as a Parquet trace file; `optional_columns` and `ranks_in_file` are the
//! quick scans an import starts with.

mod actions;
mod convert;
mod lines;
mod parse;
mod reader;
mod token_cache;

pub use actions::optional_columns;
pub use convert::{ConvertError, Converter, Layout};
pub use parse::{columns_of, LineError, TitParser, OP_NAMES};
pub use reader::{ranks_in_file, ReadError, Reader};
