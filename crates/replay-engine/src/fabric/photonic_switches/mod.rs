//! Photonic switches: one switch chip whose paths are set up transfer by transfer.
//! - Seed 000's bufferless photonic switching fabric (PSF) under a central controller,
//!   model `benes_psf`: the Beneš layout (benes.rs), the paths precomputed at boot and
//!   their losses (psf_paths.rs), the MZI cells at run time (psf_cells.rs), the arbitration
//!   policies (arbitration.rs), and the switch with its port queues, rounds and CS / TDM
//!   switching (psf_switch.rs).
//! - Seed 004's multi-stage butterfly chip (butterfly.rs) with circuits set up over an
//!   electrical setup network (circuit_setup.rs): the photonic side of `photonic_hybrid`.

pub mod arbitration;
pub mod benes;
pub mod butterfly;
pub mod circuit_setup;
pub mod psf_cells;
pub mod psf_paths;
pub mod psf_switch;
