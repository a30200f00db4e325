//! Readers of the MPI trace formats tailcast imports, in pure Rust (no Python, no `unsafe`):
//! SimGrid's time-independent traces (`tit`) and OTF2 archives (`otf2`). They turn files
//! into the TRACE columns (`columns`) or into definitions and events; the pyo3 binding
//! (crates/replay-py) only hands the results to Python. Errors name the line, or the file
//! and byte, that could not be read.

#![forbid(unsafe_code)]

pub mod columns;
pub mod otf2;
pub mod tit;
