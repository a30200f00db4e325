//! tailcast replay engine: a deterministic discrete-event replayer for MPI traces.
//!
//! The crate is pure Rust (no Python, no file I/O); the `replay-py` crate binds it as
//! `tailcast._core`. Data crosses the boundary as plain column slices.

pub mod bigvec;
pub mod collectives;
pub mod config;
pub mod engine;
pub mod error;
pub mod fabric;
pub mod ops;
pub mod placement;
pub mod prng;
pub mod scenario;
pub mod trace;

pub use config::{Arrivals, Generator, LocalityClass, Pattern, Placement, ReplayOptions, Traffic};
pub use engine::{
    engine_chunk_rows, replay, replay_interruptible, replay_scenario, JobInput, JobResult,
    MessagesOut, OpsOut, Progress, ReplayOutput, ReplayStats, ReplayStream, StreamJob, StreamTrace,
};
pub use error::ReplayError;
pub use fabric::host::HostParams;
pub use fabric::registry::FabricSpec;
pub use trace::TraceColumns;

/// Version of the engine crate, reported by `tailcast --version`.
pub fn engine_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[cfg(test)]
mod tests {
    #[test]
    fn version_is_semver() {
        let parts: Vec<&str> = super::engine_version().split('.').collect();
        assert_eq!(parts.len(), 3);
        assert!(parts.iter().all(|p| p.parse::<u32>().is_ok()));
    }
}
