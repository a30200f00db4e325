//! The traces of a replay: what the engine knows of each before its rows come, and what it
//! keeps per trace while it runs (its ranks' place among all ranks, its communicators, its
//! output and iteration latencies).

use std::collections::HashMap;

use super::iterations::IterationLatency;
use super::output::Output;
use super::ranks::RankRt;
use crate::fabric::Time;

/// What the engine knows about one trace before its rows come.
#[derive(Debug, Clone)]
pub(super) struct JobSetup {
    pub ranks: u32,
    /// Communicator id → ranks in communicator-rank order (0 = every rank if absent).
    pub comms: HashMap<i32, Vec<u32>>,
    pub output: Output,
}

/// A trace while it runs; its ranks are `base..base + ranks` of the engine's ranks.
pub(super) struct JobRt {
    pub base: u32,
    pub ranks: u32,
    pub comms: HashMap<i32, Vec<u32>>,
    pub output: Output,
    pub foreground: bool,
    /// Iteration → latency (longest per-rank span), folded as ranks leave iterations.
    pub iterations: IterationLatency,
}

impl JobRt {
    /// Records the end of `rank`'s current row: its output and its iteration span.
    #[inline]
    pub fn record(&mut self, rank: &mut RankRt, end: Time) {
        let row = rank.rows.current();
        match &mut self.output {
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
                .record(&mut self.iterations, it, rank.cur_start, end);
        }
    }
}
