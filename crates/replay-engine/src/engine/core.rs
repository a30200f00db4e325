//! The engine: its parts and the event loop.
//!
//! Parts and who owns what (each part's file imports nothing of the engine's core):
//! - `ranks` (ranks.rs): each rank's state machine and buffered rows; `jobs` (jobs.rs):
//!   each trace's ranks, communicators and outputs (output.rs);
//! - `reqs`, `msgs` (requests.rs, messages.rs): request and message slabs;
//! - `matching` (matching.rs): MPI matching queues;
//! - `programs` (programs.rs): the algorithm selector and the collective programs built;
//!   `closed` (closed_form.rs): collectives evaluated in closed form;
//! - `queue` (event_queue.rs) and `now`: simulated time;
//! - `net` (network.rs): the fabric and what the engine caches about it, host costs;
//! - `background` (background.rs): synthetic traffic generators;
//! - `host_cpu` (host_cpu.rs): each rank's CPU, when the host model's noise or occupancy
//!   acts on it;
//! - `records`, `stats` (output.rs): the delivered messages when recorded, the counters.
//!
//! Behaviour lives in `impl Engine` blocks by concern, in files that import this one:
//! executing rows (execute.rs), point-to-point protocols (p2p.rs), collectives
//! (collective.rs), end checks (completion.rs). Drivers (replay.rs, stream.rs) feed rows
//! and collect results (feed.rs).

use super::background::Background;
use super::closed_form::ClosedForms;
use super::event_queue::EventQueue;
use super::host_cpu::HostCpu;
use super::jobs::{JobRt, JobSetup};
use super::matching::Matching;
use super::messages::Messages;
use super::network::Network;
use super::output::{MessagesOut, ReplayStats};
use super::plan::Costs;
use super::programs::Programs;
use super::ranks::{RState, RankRt};
use super::requests::Requests;
use crate::collectives;
use crate::error::ReplayError;
use crate::fabric::Time;
use crate::scenario::Scenario;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Ev {
    /// The rank continues (meaning depends on its state: next row, next collective step,
    /// or the end of a wait).
    Resume(u32),
    /// A message's data enters the fabric.
    Inject(u32),
    /// A message's rendezvous control message (RTS or CTS, by its phase) enters the fabric.
    Control(u32),
    /// A request some waitany blocks on completes now (its completion time was known
    /// earlier; the first such instant decides which request ends the waitany).
    Signal(u32),
    /// A background generator's node sends its next message.
    Background(u32),
}

/// How an operation continues after it started.
pub(super) enum Outcome {
    /// It ends at this time.
    End(Time),
    /// The rank is blocked (state set); a completion will wake it.
    Blocked,
    /// Continue the rank at this time in the state already set (collective steps).
    Continue(Time),
    /// A fatal error was recorded.
    Failed,
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

pub(crate) struct Engine {
    pub(super) jobs: Vec<JobRt>,
    pub(super) ranks: Vec<RankRt>,
    pub(super) reqs: Requests,
    pub(super) msgs: Messages,
    pub(super) matching: Matching,
    pub(super) programs: Programs,
    pub(super) closed: ClosedForms,
    pub(super) queue: EventQueue<Ev>,
    pub(super) now: Time,
    pub(super) net: Network,
    pub(super) background: Background,
    pub(super) compute_scale: f64,
    /// Each rank's CPU (None: the host model leaves it alone).
    pub(super) host_cpu: Option<Box<HostCpu>>,
    /// Reused buffer of request slots (waits, collective steps).
    pub(super) scratch: Vec<u32>,
    /// A rank that must not continue before more of its rows are fed, and when.
    pub(super) starved: Option<(u32, Time)>,
    /// Foreground ranks not finished yet, and when the last finished one did; with
    /// background traffic the replay ends at that instant once none is left.
    pub(super) foreground_left: usize,
    foreground_end: Time,
    /// Background traffic exists (generators or background traces): it is cut off when the
    /// foreground ends instead of being run to completion.
    cut_off: bool,
    started: bool,
    pub(super) fatal: Option<ReplayError>,
    pub(super) stats: ReplayStats,
    /// One row per delivered message, when recording.
    pub(super) records: Option<MessagesOut>,
    /// Where the scenario put each background job (reported with the results).
    pub(super) background_endpoints: Vec<Vec<u32>>,
}

impl Engine {
    /// The engine of `scenario`, whose traces are `setups` (one per declared job): takes the
    /// build that checked the fabric (or builds it) — the one build of a replay — and places
    /// everything on it.
    pub(super) fn new(setups: Vec<JobSetup>, scenario: &Scenario) -> Result<Self, ReplayError> {
        let options = &scenario.options;
        if !options.compute_scale.is_finite() || options.compute_scale < 0.0 {
            return Err(ReplayError::BadConfig(
                "compute_scale must be finite and >= 0".into(),
            ));
        }
        let selector = collectives::Selector::parse(&options.coll_overrides)
            .map_err(|e| ReplayError::BadConfig(e.to_string()))?;
        let built = scenario
            .fabric
            .take_or_build(options.seed)
            .map_err(|e| ReplayError::BadConfig(e.to_string()))?;
        let mut net = Network::new(built, scenario.fabric.spec.host(), options)?;
        let counts: Vec<u32> = setups.iter().map(|s| s.ranks).collect();
        let placed = scenario.place(net.fabric(), &counts)?;
        let mut jobs = Vec::with_capacity(setups.len());
        let mut ranks = Vec::new();
        let mut foreground_left = 0;
        for ((j, setup), endpoints) in setups.into_iter().enumerate().zip(placed.jobs) {
            let foreground = scenario.jobs[j].foreground;
            let base = ranks.len() as u32;
            for r in 0..setup.ranks {
                ranks.push(RankRt::new(j as u32, r, endpoints[r as usize]));
            }
            if foreground {
                foreground_left += setup.ranks as usize;
            }
            let mut comms = setup.comms;
            comms.entry(0).or_insert_with(|| (0..setup.ranks).collect());
            jobs.push(JobRt {
                base,
                ranks: setup.ranks,
                comms,
                output: setup.output,
                foreground,
                iterations: Default::default(),
            });
        }
        let generators = placed.generators;
        let background_endpoints = generators.iter().map(|g| g.endpoints.clone()).collect();
        let cut_off = !generators.is_empty() || jobs.iter().any(|j| !j.foreground);
        let mut background = Background::new(generators, jobs.len() as u32, &net, options.seed)?;
        if net.fabric().background_as_load() {
            net.background_load(&background.demands());
            background.leave_to_fabric();
        }
        let nranks = ranks.len();
        let record = options
            .record_messages
            .unwrap_or_else(|| net.fabric().reports_transfers());
        let host_cpu = HostCpu::new(&net.host, nranks, options.seed);
        // Closed forms skip per-message work, so not when messages are recorded or overheads
        // occupy the CPU (host noise they take into account: plan/).
        let closed_form = options.closed_form_collectives
            && net.allows_closed_forms()
            && !record
            && host_cpu.as_ref().is_none_or(|h| !h.occupies_cpu());
        let costs = match net.alpha_beta {
            Some((alpha_ns, beta_ns_per_byte)) if closed_form => Some(Costs {
                alpha_ns,
                beta_ns_per_byte,
                overhead_ns: net.host.overhead_ns,
                overhead_ns_per_byte: net.host.overhead_ns_per_byte,
                gamma_ns_per_byte: net.host.gamma_ns_per_byte,
                eager_threshold: net.eager_threshold,
            }),
            _ => None,
        };
        Ok(Self {
            jobs,
            ranks,
            reqs: Requests::default(),
            msgs: Messages::default(),
            matching: Matching::new(nranks),
            programs: Programs::new(selector),
            closed: ClosedForms::new(costs),
            queue: EventQueue::with_capacity(nranks * 2),
            now: 0.0,
            net,
            background,
            compute_scale: options.compute_scale,
            host_cpu,
            scratch: Vec::new(),
            starved: None,
            foreground_left,
            foreground_end: 0.0,
            cut_off,
            started: false,
            fatal: None,
            stats: ReplayStats::default(),
            records: record.then(MessagesOut::default),
            background_endpoints,
        })
    }

    #[inline]
    pub(super) fn push(&mut self, t: Time, ev: Ev) {
        self.queue.push(t, ev);
    }

    /// Whether nothing pending (engine queue or fabric) comes before `t`. Neither is ever
    /// earlier than the queue's current instant, so up to that instant the fabric is not
    /// asked: asking settles a flow fabric's rates, and the transfers a rank starts at one
    /// instant are then re-rated together rather than once each.
    pub(super) fn nothing_before(&mut self, t: Time) -> bool {
        if t <= self.queue.now() {
            return true;
        }
        let h = self.queue.peek_time().unwrap_or(f64::INFINITY);
        if !self.net.holds_transfers {
            return t <= h;
        }
        t <= self.net.next_time().map_or(h, |f| f.min(h))
    }

    /// With background traffic, whether the replay is over before an event at `next`:
    /// every foreground rank finished before it. (A rank's last row may end in the
    /// future of the event being processed, so the instant matters, not the count.)
    fn over(&self, next: Time) -> bool {
        self.cut_off && self.foreground_left == 0 && next > self.foreground_end
    }

    /// Runs until every rank finished (`Progress::Done`) or one needs more rows
    /// (`Progress::NeedInput`); after feeding it, call again: the replay continues exactly
    /// where it paused, so results do not depend on how the rows were chunked.
    pub(super) fn run(&mut self) -> Result<Progress, ReplayError> {
        if !self.started {
            self.started = true;
            for r in 0..self.ranks.len() as u32 {
                self.push(0.0, Ev::Resume(r));
            }
            for (node, t) in self.background.first_sends() {
                self.push(t, Ev::Background(node));
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
            let heap_t = self.queue.peek_time();
            // An event at the queue's current instant goes first whatever the fabric holds
            // (never earlier than that instant): not asking it lets a flow fabric re-rate
            // all the transfers this instant starts at once (see `nothing_before`).
            let due_now = heap_t == Some(self.queue.now());
            let fabric_t = if self.net.holds_transfers && !due_now {
                self.net.next_time()
            } else {
                None
            };
            if self.cut_off && self.foreground_left == 0 {
                let next = match (fabric_t, heap_t) {
                    (Some(f), Some(h)) => f.min(h),
                    (f, h) => f.or(h).unwrap_or(f64::INFINITY),
                };
                if self.over(next) {
                    self.now = self.foreground_end;
                    break;
                }
            }
            match (fabric_t, heap_t) {
                (None, None) => break,
                (Some(f), h) if h.is_none_or(|h| f < h) => {
                    self.now = f;
                    self.queue.advance_to(f);
                    let mut delivered = self.net.take_delivered();
                    self.net.advance(f, &mut delivered);
                    for d in &delivered {
                        self.now = d.at;
                        self.on_fabric_delivery(d);
                    }
                    self.net.give_back_delivered(delivered);
                }
                _ => {
                    let (t, ev) = self.queue.pop().expect("peeked");
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
                        Ev::Control(m) => self.send_control(m),
                        Ev::Signal(slot) => self.on_signal(slot, t),
                        Ev::Background(node) => {
                            // Posted as it is generated (its receive too).
                            let posted = self.reqs.post();
                            let (net, stats) = (&mut self.net, &mut self.stats);
                            let next = self.background.send(node, t, posted, net, stats);
                            self.push(next, Ev::Background(node));
                        }
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
        if self.fatal.is_some() {
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

    /// Rank `r` finished its last row at `end`.
    pub(super) fn rank_done(&mut self, r: u32, end: Time) {
        let rank = &mut self.ranks[r as usize];
        rank.state = RState::Done;
        rank.finish = end;
        if self.jobs[rank.job as usize].foreground {
            self.foreground_left -= 1;
            self.foreground_end = self.foreground_end.max(end);
        }
    }

    /// Simulated time the last rank of `job` finished, and every rank's endpoint.
    pub(super) fn job_end(&self, job: usize) -> (f64, Vec<u32>) {
        let j = &self.jobs[job];
        let members = &self.ranks[j.base as usize..(j.base + j.ranks) as usize];
        let total = members.iter().map(|r| r.finish).fold(0.0, f64::max);
        (total, members.iter().map(|r| r.endpoint).collect())
    }

    /// Counters of the fabric and of the engine's own traffic at the end of a replay.
    pub(super) fn fabric_stats(&self) -> Vec<(String, f64)> {
        let mut out = Vec::new();
        let end = self.now;
        self.net.fabric().stats(end, &mut out);
        if let Some(capacity) = self.background.capacity_bytes(end) {
            let s = &self.stats;
            out.push((
                "background_offered_load".into(),
                s.background_bytes as f64 / capacity,
            ));
            out.push((
                "background_delivered_load".into(),
                s.background_delivered_bytes as f64 / capacity,
            ));
        }
        out
    }
}
