//! What both drivers (replay.rs, stream.rs) do to an engine: feed a rank's rows, close its
//! input, and collect the results at the end.

use super::core::Engine;
use super::output::{JobResult, MessagesOut, Output, ReplayStats};
use super::ranks::RState;
use super::rows::Chunk;

/// Everything a replay produced besides the per-trace results.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayOutput {
    /// One per trace, in the order given.
    pub jobs: Vec<JobResult>,
    pub stats: ReplayStats,
    /// The fabric's named counters and the background traffic's, at the end.
    pub fabric_stats: Vec<(String, f64)>,
    /// Delivered messages when recorded.
    pub messages: Option<MessagesOut>,
    /// Names of the fabric's path class codes (`MessagesOut::path`).
    pub path_classes: &'static [&'static str],
    /// The endpoints of each background job (given ones, then those sized from b).
    pub background_endpoints: Vec<Vec<u32>>,
}

impl Engine {
    pub(super) fn feed(&mut self, job: u32, rank: u32, chunk: Chunk) {
        let g = self.jobs[job as usize].base + rank;
        self.ranks[g as usize].rows.feed(chunk);
    }

    pub(super) fn take_spare(&mut self, job: u32, rank: u32) -> Chunk {
        let g = self.jobs[job as usize].base + rank;
        self.ranks[g as usize].rows.take_spare()
    }

    pub(super) fn close(&mut self, job: u32, rank: u32) {
        let g = self.jobs[job as usize].base + rank;
        self.ranks[g as usize].rows.closed = true;
    }

    /// Results of trace `job` (folds the iterations still open).
    fn job_result(&mut self, job: usize) -> JobResult {
        let (total_time_ns, endpoints) = self.job_end(job);
        let j = &mut self.jobs[job];
        let members = &mut self.ranks[j.base as usize..(j.base + j.ranks) as usize];
        let unfinished = members.iter().filter(|r| r.state != RState::Done).count() as u32;
        for rank in members {
            rank.spans.close_all(&mut j.iterations);
        }
        let latencies = j.iterations.take();
        let (sim_start_ns, sim_end_ns) = match std::mem::replace(&mut j.output, Output::Discard) {
            Output::Rows { start, end } => (start, end),
            _ => (Vec::new(), Vec::new()),
        };
        JobResult {
            sim_start_ns,
            sim_end_ns,
            iterations: latencies.iterations,
            iteration_latency_ns: latencies.max_ns,
            iteration_mean_ns: latencies.mean_ns,
            total_time_ns,
            endpoints,
            unfinished_ranks: unfinished,
        }
    }

    /// Ends the replay: per-trace results, counters, fabric statistics, message rows.
    pub(super) fn finish(mut self) -> ReplayOutput {
        let jobs = (0..self.jobs.len()).map(|j| self.job_result(j)).collect();
        ReplayOutput {
            jobs,
            stats: self.stats,
            fabric_stats: self.fabric_stats(),
            path_classes: self.net.fabric().path_classes(),
            messages: self.records.take(),
            background_endpoints: std::mem::take(&mut self.background_endpoints),
        }
    }
}
