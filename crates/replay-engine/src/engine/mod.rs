//! The discrete-event core. Ranks are state machines stepping through their rows; messages
//! are matched with MPI semantics (p2p.rs), collectives run as point-to-point step schedules
//! (coll.rs), and every message's data is a transfer on the fabric. Time is f64 ns; ties
//! are broken by insertion order, so a replay is a pure function of its inputs.

mod coll;
mod exec;
mod gather;
mod iterations;
mod p2p;
mod plan;
mod queue;
mod report;
mod rows;
mod state;
mod stream;

use std::collections::HashMap;

use crate::collectives::{self, Algo, CollKind};
use crate::config::{FabricSpec, HostParams, Placement, ReplayOptions};
use crate::error::ReplayError;
use crate::fabric::{self, Fabric, Time};
use crate::hash::FastMap;
use crate::placement::place;
use state::{Msg, RankRt, Req};
pub use stream::{
    engine_chunk_rows, replay, JobInput, JobResult, OpsOut, Progress, ReplayStream, StreamJob,
};

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

/// What the engine knows about one trace before its rows come.
#[derive(Debug, Clone)]
struct JobSetup {
    ranks: u32,
    /// Communicator id → world ranks in communicator-rank order (0 = every rank if absent).
    comms: HashMap<i32, Vec<u32>>,
    placement: Placement,
    output: stream::Output,
}

struct JobRt {
    base: u32,
    ranks: u32,
    comms: HashMap<i32, Vec<u32>>,
    output: stream::Output,
    /// Iteration → latency (longest per-rank span), folded as ranks leave iterations.
    iterations: iterations::IterationLatency,
}

pub(crate) struct Engine {
    jobs: Vec<JobRt>,
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
    /// `fabric.holds_transfers()`, asked once.
    fabric_queue: bool,
    /// `fabric.alpha_beta()`, asked once: a transfer then costs α + nβ, computed here.
    alpha_beta: Option<(f64, f64)>,
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
    /// A rank that must not continue before more of its rows are fed, and when.
    starved: Option<(u32, Time)>,
    started: bool,
    fatal: Option<ReplayError>,
    stats: ReplayStats,
}

impl Engine {
    fn new(
        setups: Vec<JobSetup>,
        spec: &FabricSpec,
        options: &ReplayOptions,
    ) -> Result<Self, ReplayError> {
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
        let overrides: HashMap<CollKind, Algo> =
            collectives::parse_overrides(&options.coll_overrides)
                .map_err(|e| ReplayError::BadConfig(e.to_string()))?;
        let fabric = fabric::build(spec, options.seed).map_err(ReplayError::BadConfig)?;
        let mut jobs = Vec::with_capacity(setups.len());
        let mut ranks = Vec::new();
        for (j, setup) in setups.into_iter().enumerate() {
            let endpoints =
                place(setup.ranks, fabric.endpoints(), &setup.placement).map_err(|m| {
                    ReplayError::BadTrace {
                        trace: j as u32,
                        row: None,
                        message: m,
                    }
                })?;
            let base = ranks.len() as u32;
            for r in 0..setup.ranks {
                ranks.push(RankRt::new(j as u32, r, endpoints[r as usize]));
            }
            let mut comms = setup.comms;
            comms.entry(0).or_insert_with(|| (0..setup.ranks).collect());
            jobs.push(JobRt {
                base,
                ranks: setup.ranks,
                comms,
                output: setup.output,
                iterations: Default::default(),
            });
        }
        let nranks = ranks.len();
        let closed_form =
            options.closed_form_collectives && !host.handshake && fabric.alpha_beta().is_some();
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
            fabric_queue: fabric.holds_transfers(),
            alpha_beta: fabric.alpha_beta(),
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
            starved: None,
            started: false,
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
        if !self.fabric_queue {
            return h;
        }
        self.fabric.next_time().map_or(h, |f| f.min(h))
    }

    /// Runs until every rank finished (`Progress::Done`) or one needs more rows
    /// (`Progress::NeedInput`); after feeding it, call again: the replay continues exactly
    /// where it paused, so results do not depend on how the rows were chunked.
    fn run(&mut self) -> Result<Progress, ReplayError> {
        if !self.started {
            self.started = true;
            for r in 0..self.ranks.len() as u32 {
                self.push(0.0, Ev::Resume(r));
            }
        }
        if let Some((r, t)) = self.starved.take() {
            self.resume(r, t);
            if let Some(p) = self.paused() {
                return Ok(p);
            }
        }
        loop {
            if let Some(err) = self.fatal.take() {
                return Err(err);
            }
            let fabric_t = if self.fabric_queue {
                self.fabric.next_time()
            } else {
                None
            };
            let heap_t = self.heap.peek_time();
            match (fabric_t, heap_t) {
                (None, None) => break,
                (Some(f), h) if h.is_none_or(|h| f < h) => {
                    self.now = f;
                    self.heap.advance_to(f);
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
                        Ev::Resume(r) => {
                            self.resume(r, t);
                            if let Some(p) = self.paused() {
                                return Ok(p);
                            }
                        }
                        Ev::Inject(m) => self.inject(m),
                        Ev::Signal(slot) => self.on_signal(slot, t),
                    }
                }
            }
        }
        if let Some(err) = self.fatal.take() {
            return Err(err);
        }
        self.check_complete()?;
        Ok(Progress::Done)
    }

    fn paused(&mut self) -> Option<Progress> {
        if let Some(err) = &self.fatal {
            let _ = err;
            self.starved = None;
            return None; // the loop reports the error
        }
        let (r, _) = self.starved?;
        let rank = &self.ranks[r as usize];
        Some(Progress::NeedInput {
            job: rank.job,
            rank: rank.local,
        })
    }

    /// Simulated time the last rank of `job` finished, and every rank's endpoint.
    fn job_end(&self, job: usize) -> (f64, Vec<u32>) {
        let j = &self.jobs[job];
        let members = &self.ranks[j.base as usize..(j.base + j.ranks) as usize];
        let total = members.iter().map(|r| r.finish).fold(0.0, f64::max);
        (total, members.iter().map(|r| r.endpoint).collect())
    }
}

#[cfg(test)]
mod tests;
