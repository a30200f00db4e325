//! The discrete-event core. Ranks are state machines stepping through their rows; messages
//! are matched with MPI semantics (p2p.rs), collectives run as point-to-point step schedules
//! (coll.rs), and every message's data is a transfer on the fabric. Time is f64 ns; ties
//! are broken by insertion order, so a replay is a pure function of its inputs.

mod coll;
mod exec;
mod gather;
mod p2p;
mod plan;
mod queue;
mod report;
mod state;

use std::collections::HashMap;

use crate::hash::FastMap;

use crate::collectives::{self, Algo, CollKind};
use crate::config::{FabricSpec, HostParams, Placement, ReplayOptions};
use crate::error::ReplayError;
use crate::fabric::{self, Fabric, Time};
use crate::placement::place;
use crate::trace::{self, TraceColumns, TraceIndex};
use state::{Msg, RankRt, Req};

/// One trace to replay and where its ranks sit.
#[derive(Debug, Clone)]
pub struct JobInput<'a> {
    pub columns: TraceColumns<'a>,
    pub placement: Placement,
}

/// Replay results of one trace.
#[derive(Debug, Clone, PartialEq)]
pub struct JobResult {
    /// Simulated start / end of every row (ns from the start of the replay), in row order.
    pub sim_start_ns: Vec<f64>,
    pub sim_end_ns: Vec<f64>,
    /// Iteration ids present in the trace (ascending) and their latency: per rank the span
    /// from its first start to its last end inside the iteration, maximum over ranks (OSU's
    /// reported quantity).
    pub iterations: Vec<i32>,
    pub iteration_latency_ns: Vec<f64>,
    /// Time the last rank finished.
    pub total_time_ns: f64,
    /// Endpoint of every rank.
    pub endpoints: Vec<u32>,
}

/// Whole-replay counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReplayStats {
    /// Trace rows executed.
    pub actions: u64,
    /// Point-to-point messages (user and collective-internal).
    pub messages: u64,
    pub events: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// The rank continues (meaning depends on its state: next row, next collective step,
    /// or the end of a wait).
    Resume(u32),
    /// A message's data enters the fabric.
    Inject(u32),
    /// A request some waitany blocks on completes now (its completion time was known
    /// earlier; the first such instant decides which request ends the waitany).
    Signal(u32),
}


struct JobRt<'a> {
    cols: TraceColumns<'a>,
    index: TraceIndex,
    base: u32,
    sim_start: Vec<f64>,
    sim_end: Vec<f64>,
}

pub(crate) struct Engine<'a> {
    jobs: Vec<JobRt<'a>>,
    ranks: Vec<RankRt>,
    reqs: Vec<Req>,
    free_reqs: Vec<u32>,
    msgs: Vec<Msg>,
    free_msgs: Vec<u32>,
    unexpected: Vec<std::collections::VecDeque<u32>>,
    posted: Vec<std::collections::VecDeque<p2p::Posted>>,
    coll_chan: FastMap<(u32, u32, i32), std::collections::VecDeque<p2p::CollEntry>>,
    heap: queue::EventQueue<Ev>,
    fabric: Box<dyn Fabric>,
    host: HostParams,
    eager_threshold: u64,
    compute_scale: f64,
    overrides: Vec<(CollKind, Algo)>,
    sched_cache: coll::ScheduleCache,
    gathers: gather::Gathers,
    now: Time,
    delivered: Vec<(u32, Time)>,
    /// Reused buffer of request slots (waits, collective steps).
    scratch: Vec<u32>,
    fatal: Option<ReplayError>,
    stats: ReplayStats,
}

/// Replays `jobs` together on one fabric.
pub fn replay(
    jobs: &[JobInput<'_>],
    spec: &FabricSpec,
    options: &ReplayOptions,
) -> Result<(Vec<JobResult>, ReplayStats), ReplayError> {
    if !options.compute_scale.is_finite() || options.compute_scale < 0.0 {
        return Err(ReplayError::BadConfig(
            "compute_scale must be finite and >= 0".into(),
        ));
    }
    let host = spec.host;
    let host_values = [
        host.overhead_ns,
        host.overhead_ns_per_byte,
        host.gamma_ns_per_byte,
    ];
    if host_values.iter().any(|v| !v.is_finite() || *v < 0.0) {
        return Err(ReplayError::BadConfig(
            "host costs must be finite and >= 0".into(),
        ));
    }
    let overrides = collectives::parse_overrides(&options.coll_overrides)
        .map_err(|e| ReplayError::BadConfig(e.to_string()))?;
    let fabric = fabric::build(spec, options.seed).map_err(ReplayError::BadConfig)?;
    let mut engine = Engine::new(jobs, fabric, host, options, overrides)?;
    engine.run()?;
    Ok(engine.finish())
}

impl<'a> Engine<'a> {
    fn new(
        inputs: &[JobInput<'a>],
        fabric: Box<dyn Fabric>,
        host: HostParams,
        options: &ReplayOptions,
        overrides: HashMap<CollKind, Algo>,
    ) -> Result<Self, ReplayError> {
        let mut jobs = Vec::with_capacity(inputs.len());
        let mut ranks = Vec::new();
        for (j, input) in inputs.iter().enumerate() {
            let index = trace::index(j as u32, &input.columns)?;
            let endpoints =
                place(index.ranks, fabric.endpoints(), &input.placement).map_err(|m| {
                    ReplayError::BadTrace {
                        trace: j as u32,
                        row: None,
                        message: m,
                    }
                })?;
            let base = ranks.len() as u32;
            for r in 0..index.ranks {
                let (s, e) = (index.starts[r as usize], index.starts[r as usize + 1]);
                ranks.push(RankRt::new(j as u32, r, endpoints[r as usize], s, e));
            }
            let n = input.columns.len();
            jobs.push(JobRt {
                cols: input.columns,
                index,
                base,
                sim_start: vec![0.0; n],
                sim_end: vec![0.0; n],
            });
        }
        let nranks = ranks.len();
        let closed_form = options.closed_form_collectives
            && !host.handshake
            && fabric.alpha_beta().is_some();
        Ok(Self {
            jobs,
            ranks,
            reqs: Vec::new(),
            free_reqs: Vec::new(),
            msgs: Vec::new(),
            free_msgs: Vec::new(),
            unexpected: vec![Default::default(); nranks],
            posted: vec![Default::default(); nranks],
            coll_chan: FastMap::default(),
            heap: queue::EventQueue::with_capacity(nranks * 2),
            fabric,
            host,
            eager_threshold: options.eager_threshold_bytes,
            compute_scale: options.compute_scale,
            overrides: overrides.into_iter().collect(),
            sched_cache: coll::ScheduleCache::default(),
            gathers: gather::Gathers::new(closed_form),
            now: 0.0,
            delivered: Vec::new(),
            scratch: Vec::new(),
            fatal: None,
            stats: ReplayStats::default(),
        })
    }

    fn push(&mut self, t: Time, ev: Ev) {
        self.heap.push(t, ev);
    }

    /// Earliest pending instant (engine queue or fabric).
    fn horizon(&mut self) -> Time {
        let h = self.heap.peek_time().unwrap_or(f64::INFINITY);
        self.fabric.next_time().map_or(h, |f| f.min(h))
    }

    fn run(&mut self) -> Result<(), ReplayError> {
        for r in 0..self.ranks.len() as u32 {
            self.push(0.0, Ev::Resume(r));
        }
        loop {
            if let Some(err) = self.fatal.take() {
                return Err(err);
            }
            let fabric_t = self.fabric.next_time();
            let heap_t = self.heap.peek_time();
            match (fabric_t, heap_t) {
                (None, None) => break,
                (Some(f), h) if h.is_none_or(|h| f < h) => {
                    self.now = f;
                    let mut delivered = std::mem::take(&mut self.delivered);
                    self.fabric.advance(f, &mut delivered);
                    for &(m, t) in &delivered {
                        self.now = t;
                        self.on_deliver(m, t);
                    }
                    delivered.clear();
                    self.delivered = delivered;
                }
                _ => {
                    let (t, ev) = self.heap.pop().expect("peeked");
                    self.now = t;
                    self.stats.events += 1;
                    match ev {
                        Ev::Resume(r) => self.resume(r, t),
                        Ev::Inject(m) => self.inject(m),
                        Ev::Signal(slot) => self.on_signal(slot, t),
                    }
                }
            }
        }
        if let Some(err) = self.fatal.take() {
            return Err(err);
        }
        self.check_complete()
    }

    fn finish(self) -> (Vec<JobResult>, ReplayStats) {
        let stats = self.stats;
        let ranks = &self.ranks;
        let results = self
            .jobs
            .into_iter()
            .map(|job| {
                let (iterations, latency) = report::iteration_latencies(
                    &job.cols,
                    &job.index,
                    &job.sim_start,
                    &job.sim_end,
                );
                let members =
                    &ranks[job.base as usize..job.base as usize + job.index.ranks as usize];
                let total = members.iter().map(|r| r.finish).fold(0.0, f64::max);
                JobResult {
                    sim_start_ns: job.sim_start,
                    sim_end_ns: job.sim_end,
                    iterations,
                    iteration_latency_ns: latency,
                    total_time_ns: total,
                    endpoints: members.iter().map(|r| r.endpoint).collect(),
                }
            })
            .collect();
        (results, stats)
    }
}

#[cfg(test)]
mod tests;
