//! The streaming driver: a caller feeds each rank's rows chunk by chunk (read from a file),
//! so memory grows with the rows in flight, not with the trace. Executed rows go to an
//! `OpsOut` buffer the caller drains.

use std::collections::HashMap;

use super::core::{Engine, Progress};
use super::feed::ReplayOutput;
use super::jobs::JobSetup;
use super::output::{OpsOut, Output};
use super::rows::{self, Chunk};
use crate::config::Generator;
use crate::config::{Placement, ReplayOptions};
use crate::error::ReplayError;
use crate::fabric::registry::FabricSpec;
use crate::scenario::{JobDecl, JobPlace, Scenario};
use crate::trace::{self, TraceColumns};

/// A trace fed in chunks: its rank count, known communicators and placement.
#[derive(Debug, Clone)]
pub struct StreamJob {
    pub ranks: u32,
    /// Communicator id → world ranks in communicator-rank order. Every communicator a
    /// collective uses must be listed, except MPI_COMM_WORLD (0).
    pub comms: Vec<(i32, Vec<u32>)>,
    pub placement: Placement,
    /// Collect executed rows for `take_ops` (else only iteration latencies are kept).
    pub keep_ops: bool,
    /// Background traces are cut off when every foreground trace finished.
    pub foreground: bool,
}

/// What a streamed trace is before its rows come; where it sits is its scenario's.
#[derive(Debug, Clone)]
pub struct StreamTrace {
    pub ranks: u32,
    /// Communicator id → world ranks in communicator-rank order (as `StreamJob`).
    pub comms: Vec<(i32, Vec<u32>)>,
    /// Collect executed rows for `take_ops`.
    pub keep_ops: bool,
}

/// A replay fed chunk by chunk (see the module comment).
pub struct ReplayStream {
    engine: Engine,
}

impl ReplayStream {
    /// A streamed replay of the traces of `jobs` placed as they say, with background jobs
    /// already on their endpoints (tests; `of_scenario` is the general form).
    pub fn new(
        jobs: Vec<StreamJob>,
        generators: Vec<Generator>,
        spec: &FabricSpec,
        options: &ReplayOptions,
    ) -> Result<Self, ReplayError> {
        let decls = jobs
            .iter()
            .map(|j| JobDecl {
                at: JobPlace::Placement(j.placement.clone()),
                foreground: j.foreground,
            })
            .collect();
        let scenario = Scenario::of(spec, options, decls, generators);
        let traces = jobs
            .into_iter()
            .map(|j| StreamTrace {
                ranks: j.ranks,
                comms: j.comms,
                keep_ops: j.keep_ops,
            })
            .collect();
        Self::of_scenario(&scenario, traces)
    }

    /// A streamed replay of `scenario`, whose job `j` is `traces[j]`.
    pub fn of_scenario(scenario: &Scenario, traces: Vec<StreamTrace>) -> Result<Self, ReplayError> {
        if traces.len() != scenario.jobs.len() {
            return Err(ReplayError::BadConfig(format!(
                "{} traces for {} declared jobs",
                traces.len(),
                scenario.jobs.len()
            )));
        }
        let jobs = traces;
        let mut setups = Vec::with_capacity(jobs.len());
        for (j, job) in jobs.into_iter().enumerate() {
            let mut comms = HashMap::new();
            for (id, members) in job.comms {
                if let Some(&m) = members.iter().find(|&&m| m >= job.ranks) {
                    return Err(ReplayError::BadTrace {
                        trace: j as u32,
                        row: None,
                        message: format!("communicator {id} lists rank {m}, not in the trace"),
                    });
                }
                comms.insert(id, members);
            }
            let output = if job.keep_ops {
                Output::Ops(OpsOut::default())
            } else {
                Output::Discard
            };
            setups.push(JobSetup {
                ranks: job.ranks,
                comms,
                output,
            });
        }
        Ok(Self {
            engine: Engine::new(setups, scenario)?,
        })
    }

    /// Appends rows of one rank (`cols.rank` is ignored; `first_row` is the trace row
    /// number of the first, for messages). Rows must continue the rank's seq order.
    pub fn feed(
        &mut self,
        job: u32,
        rank: u32,
        cols: &TraceColumns<'_>,
        first_row: u64,
    ) -> Result<(), ReplayError> {
        let bad = |message: String| ReplayError::BadTrace {
            trace: job,
            row: None,
            message,
        };
        let e = &mut self.engine;
        let j = e
            .jobs
            .get(job as usize)
            .ok_or_else(|| bad(format!("no trace {job}")))?;
        if rank >= j.ranks {
            return Err(bad(format!("rank {rank} is not a rank of the trace")));
        }
        let (base, ranks) = (j.base, j.ranks);
        let n = cols.seq.len();
        trace::check_lengths(cols, n).map_err(bad)?;
        let reuse = e.take_spare(job, rank);
        let chunk = Chunk::gather_range(reuse, cols, 0, n, first_row);
        let rows = &e.ranks[(base + rank) as usize].rows;
        if rows.closed {
            return Err(bad(format!(
                "rank {rank}: rows fed after its input was closed"
            )));
        }
        rows::validate(rank, ranks, rows.last_seq, &chunk).map_err(bad)?;
        e.feed(job, rank, chunk);
        Ok(())
    }

    /// No more rows will come for this rank.
    pub fn close(&mut self, job: u32, rank: u32) {
        self.engine.close(job, rank);
    }

    pub fn run(&mut self) -> Result<Progress, ReplayError> {
        self.engine.run()
    }

    /// Rows executed since the last call (empty unless `keep_ops`).
    pub fn take_ops(&mut self, job: u32) -> OpsOut {
        match &mut self.engine.jobs[job as usize].output {
            Output::Ops(o) => std::mem::take(o),
            _ => OpsOut::default(),
        }
    }

    /// Like `take_ops`, into `out` (cleared first) by swapping buffers: a caller that keeps
    /// `out` between calls lets the engine fill vectors that already have their capacity.
    pub fn swap_ops(&mut self, job: u32, out: &mut OpsOut) {
        out.clear();
        if let Output::Ops(o) = &mut self.engine.jobs[job as usize].output {
            std::mem::swap(o, out);
        }
    }

    /// Per-trace results (iterations, total time, endpoints; no per-row arrays), counters,
    /// fabric statistics and message rows.
    pub fn finish(self) -> ReplayOutput {
        self.engine.finish()
    }
}
