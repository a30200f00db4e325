//! Feeding rows to the engine and collecting its outputs.
//!
//! The engine pulls rows: when a rank needs more, `run` pauses with `NeedInput` and the
//! driver feeds that rank's next chunk (or closes its input). `replay` drives it from
//! whole in-memory traces; `ReplayStream` lets a caller feed chunks read from a file, so
//! memory grows with the rows in flight, not with the trace. Executed rows go to per-row
//! arrays (batch) or to an `OpsOut` buffer the caller drains (stream).

use std::collections::HashMap;

use super::rows::{self, Chunk};
use super::state::RankRt;
use super::{Engine, JobRt, JobSetup, ReplayStats};
use crate::config::{FabricSpec, Placement, ReplayOptions};
use crate::error::ReplayError;
use crate::fabric::Time;
use crate::trace::{self, TraceColumns};

/// One trace to replay and where its ranks sit.
#[derive(Debug, Clone)]
pub struct JobInput<'a> {
    pub columns: TraceColumns<'a>,
    pub placement: Placement,
}

/// Replay results of one trace.
#[derive(Debug, Clone, PartialEq)]
pub struct JobResult {
    /// Simulated start / end of every row (ns from the start of the replay), in row order
    /// (empty for streamed traces: their rows went to `OpsOut`).
    pub sim_start_ns: Vec<f64>,
    pub sim_end_ns: Vec<f64>,
    /// Iteration ids present in the trace (ascending) and their latency: per rank the span
    /// from its first start to its last end inside the iteration, maximum over ranks (OSU's
    /// reported quantity). Iteration ids are expected not to decrease within a rank.
    pub iterations: Vec<i32>,
    pub iteration_latency_ns: Vec<f64>,
    /// Time the last rank finished.
    pub total_time_ns: f64,
    /// Endpoint of every rank.
    pub endpoints: Vec<u32>,
}

/// Executed rows of a streamed trace, in completion order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OpsOut {
    pub rank: Vec<u32>,
    pub seq: Vec<i64>,
    pub op: Vec<u8>,
    pub sim_start_ns: Vec<f64>,
    pub sim_end_ns: Vec<f64>,
}

#[derive(Debug, Clone)]
pub(super) enum Output {
    /// Simulated start / end by trace row number.
    Rows {
        start: Vec<f64>,
        end: Vec<f64>,
    },
    Ops(OpsOut),
    Discard,
}

/// Where a replay stands after `run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Rank `rank` of trace `job` needs its next rows (feed them, or close its input).
    NeedInput {
        job: u32,
        rank: u32,
    },
    Done,
}

/// Records the end of rank `r`'s current row: its output and its iteration span.
#[inline]
pub(super) fn record(job: &mut JobRt, rank: &mut RankRt, end: Time) {
    let row = rank.rows.current();
    match &mut job.output {
        Output::Rows { start, end: ends } => {
            let id = rank.rows.current_id() as usize;
            start[id] = rank.cur_start;
            ends[id] = end;
        }
        Output::Ops(o) => {
            o.rank.push(rank.local);
            o.seq.push(row.seq);
            o.op.push(row.op);
            o.sim_start_ns.push(rank.cur_start);
            o.sim_end_ns.push(end);
        }
        Output::Discard => {}
    }
    let it = row.iteration;
    if it >= 0 {
        rank.spans
            .record(&mut job.iterations, it, rank.cur_start, end);
    }
}

impl Engine {
    fn feed(&mut self, job: u32, rank: u32, chunk: Chunk) {
        let g = self.jobs[job as usize].base + rank;
        self.ranks[g as usize].rows.feed(chunk);
    }

    fn take_spare(&mut self, job: u32, rank: u32) -> Chunk {
        let g = self.jobs[job as usize].base + rank;
        self.ranks[g as usize].rows.take_spare()
    }

    fn close(&mut self, job: u32, rank: u32) {
        let g = self.jobs[job as usize].base + rank;
        self.ranks[g as usize].rows.closed = true;
    }

    /// Results of trace `job` (folds the iterations still open).
    fn job_result(&mut self, job: usize) -> JobResult {
        let (total_time_ns, endpoints) = self.job_end(job);
        let j = &mut self.jobs[job];
        for rank in &mut self.ranks[j.base as usize..(j.base + j.ranks) as usize] {
            rank.spans.close_all(&mut j.iterations);
        }
        let (iterations, iteration_latency_ns) = j.iterations.take();
        let (sim_start_ns, sim_end_ns) = match std::mem::replace(&mut j.output, Output::Discard) {
            Output::Rows { start, end } => (start, end),
            _ => (Vec::new(), Vec::new()),
        };
        JobResult {
            sim_start_ns,
            sim_end_ns,
            iterations,
            iteration_latency_ns,
            total_time_ns,
            endpoints,
        }
    }
}

/// Rows of one rank copied into the engine at a time (see `replay`).
pub fn engine_chunk_rows(total_ranks: usize) -> usize {
    ((1usize << 14) / total_ranks.max(1)).clamp(16, 1 << 16)
}

/// Replays in-memory traces together on one fabric.
pub fn replay(
    jobs: &[JobInput<'_>],
    spec: &FabricSpec,
    options: &ReplayOptions,
) -> Result<(Vec<JobResult>, ReplayStats), ReplayError> {
    let mut indexes = Vec::with_capacity(jobs.len());
    let mut setups = Vec::with_capacity(jobs.len());
    for (j, input) in jobs.iter().enumerate() {
        let index = trace::index(j as u32, &input.columns)?;
        let n = input.columns.len();
        setups.push(JobSetup {
            ranks: index.ranks,
            comms: index.comms.clone(),
            placement: input.placement.clone(),
            output: Output::Rows {
                start: crate::bigvec::zeroed_f64(n),
                end: crate::bigvec::zeroed_f64(n),
            },
        });
        indexes.push(index);
    }
    let mut engine = Engine::new(setups, spec, options)?;
    let mut cursor: Vec<Vec<usize>> = indexes
        .iter()
        .map(|ix| ix.starts[..ix.ranks as usize].to_vec())
        .collect();
    let total_ranks: usize = indexes.iter().map(|ix| ix.ranks as usize).sum();
    // Small copies: ~8 K rows (~0.6 MB) buffered over all ranks, copied shortly before they
    // run, so they are still in cache when they do (1 M rows ran 1.5x slower on the halo
    // benchmark, 32 K 8 % slower at 256 ranks; 4 K loses to the pauses).
    let chunk_rows = engine_chunk_rows(total_ranks);
    while let Progress::NeedInput { job, rank } = engine.run()? {
        let (j, r) = (job as usize, rank as usize);
        let ix = &indexes[j];
        let (from, to) = (cursor[j][r], ix.starts[r + 1]);
        let take = (to - from).min(chunk_rows);
        let columns = &jobs[j].columns;
        let chunk = if ix.order.is_empty() {
            let reuse = engine.take_spare(job, rank);
            Chunk::gather_range(reuse, columns, from, from + take, from as u64)
        } else {
            let rows = ix.order[from..from + take].iter();
            Chunk::gather(columns, rows.map(|&i| (i as usize, u64::from(i))))
        };
        engine.feed(job, rank, chunk);
        cursor[j][r] += take;
        if cursor[j][r] == to {
            engine.close(job, rank);
        }
    }
    let results = (0..jobs.len()).map(|j| engine.job_result(j)).collect();
    Ok((results, engine.stats))
}

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
}

/// A replay fed chunk by chunk (see the module comment).
pub struct ReplayStream {
    engine: Engine,
}

impl ReplayStream {
    pub fn new(
        jobs: Vec<StreamJob>,
        spec: &FabricSpec,
        options: &ReplayOptions,
    ) -> Result<Self, ReplayError> {
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
                placement: job.placement,
                output,
            });
        }
        Ok(Self {
            engine: Engine::new(setups, spec, options)?,
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

    /// Per-trace results (iterations, total time, endpoints; no per-row arrays).
    pub fn finish(mut self) -> (Vec<JobResult>, ReplayStats) {
        let results = (0..self.engine.jobs.len())
            .map(|j| self.engine.job_result(j))
            .collect();
        (results, self.engine.stats)
    }
}
