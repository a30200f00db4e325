//! The discrete-event core. Ranks are state machines stepping through their rows; messages
//! are matched with MPI semantics (p2p.rs, matching.rs), collectives run as point-to-point
//! step schedules (collective.rs, programs.rs) or in closed form (closed_form.rs, plan/),
//! and every message's data and rendezvous control are transfers on the fabric. Time is f64 ns; ties are broken
//! by insertion order, so a replay is a pure function of its inputs. core.rs says which
//! part owns what.

mod background;
mod closed_form;
mod collective;
mod completion;
mod core;
mod event_queue;
mod execute;
mod feed;
mod host_cpu;
mod iterations;
mod jobs;
mod matching;
mod messages;
mod network;
mod output;
mod p2p;
mod plan;
mod programs;
mod ranks;
mod replay;
mod requests;
mod rows;
mod stream;

pub use self::core::Progress;
pub use feed::ReplayOutput;
pub use output::{JobResult, MessagesOut, OpsOut, ReplayStats};
pub use replay::{engine_chunk_rows, replay, replay_interruptible, replay_scenario, JobInput};
pub use stream::{ReplayStream, StreamJob, StreamTrace};

#[cfg(test)]
mod tests;
