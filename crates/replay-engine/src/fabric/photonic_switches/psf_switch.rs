//! A bufferless photonic switch under a central controller (seed 000 §III-A, §IV-A): every
//! input port queues its flows in order; the controller serves the ports requesting a
//! path in rounds of arbitration (arbitration.rs), giving each, in the policy's order, a
//! free pre-computed path chosen by the routing rule (psf_cells.rs), or blocking the port
//! when none is free.
//!
//! Switching:
//! - **CS**: a flow holds its path until its last byte is through. A round runs whenever
//!   something can change: a request arrives at an idle port or a circuit is released.
//! - **TDM**: time is cut into slots of `slot_bytes` at the port rate, each preceded by the
//!   reconfiguration (EO tuning) delay; at every slot boundary all paths are released and
//!   a round gives each granted port one slot (the last slice of a flow may not fill it:
//!   internal fragmentation). A granted port requests again for the next slot, after the
//!   ports that were refused.
//!
//! A granted path carries data after the reconfiguration delay, at the port rate. A
//! round at an instant runs after the deliveries of that instant have been reported, so
//! work they release (the next flow of a task) joins it.

use std::collections::VecDeque;

use super::arbitration::{Arbiter, PortHistory};
use super::psf_cells::{Cells, Routing};
use super::psf_paths::PathTable;
use crate::fabric::timers::Timers;
use crate::fabric::Time;
use crate::prng::SplitMix64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Switching {
    Circuit,
    Tdm { slot_bytes: u64 },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SwitchTiming {
    /// Bytes per ns of every port.
    pub rate: f64,
    /// Reconfiguration (tuning) delay before a granted path carries light, ns.
    pub reconfiguration_ns: f64,
    pub switching: Switching,
    pub routing: Routing,
}

/// A flow the switch finished: the caller's token and what happened to it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Finished {
    pub token: u32,
    pub at: Time,
    pub setup_ns: f64,
    pub wait_ns: f64,
    pub blocked: u32,
    pub cells: u32,
}

#[derive(Debug, Clone, Copy)]
struct Flow {
    token: u32,
    src: u32,
    dst: u32,
    /// Data not yet granted a path (or a slot) remains.
    pending: bool,
    bytes: u64,
    left: u64,
    submitted: Time,
    setup_ns: f64,
    blocked: u32,
    cells: u32,
}

#[derive(Debug, Clone, Default)]
struct Port {
    queue: VecDeque<u32>,
    /// The path held now (CS: until the flow ends; TDM: until the slot ends).
    held: Option<u32>,
    history: PortHistory,
    blocked_since: Option<Time>,
    blocked_ns: f64,
    busy_ns: f64,
}

#[derive(Debug, Clone, Copy)]
enum Event {
    Finish(u32),
    Round,
}

pub struct PsfSwitch {
    table: PathTable,
    cells: Cells,
    arbiter: Arbiter,
    timing: SwitchTiming,
    rng: SplitMix64,
    ports: Vec<Port>,
    flows: Vec<Flow>,
    free_flows: Vec<u32>,
    timers: Timers<Event>,
    round_pending: Option<Time>,
    /// The last round's instant (TDM: the boundary whose slot is running).
    last_round: Time,
    next_seq: u64,
    /// Requests taken up by rounds so far (LRU's recency).
    serviced: u64,
    requesters: Vec<u32>,
    // Counters.
    rounds: u64,
    grants: u64,
    refusals: u64,
    delivered_bytes: f64,
    flows_done: u64,
    loss_max_db: f64,
    loss_sum_db: f64,
}

impl PsfSwitch {
    pub fn new(
        table: PathTable,
        cells: Cells,
        arbiter: Arbiter,
        timing: SwitchTiming,
        rng: SplitMix64,
    ) -> Self {
        let ports = table.ports() as usize;
        let port = Port::default();
        Self {
            table,
            cells,
            arbiter,
            timing,
            rng,
            ports: vec![port; ports],
            flows: Vec::new(),
            free_flows: Vec::new(),
            timers: Timers::default(),
            round_pending: None,
            last_round: f64::NEG_INFINITY,
            next_seq: 0,
            serviced: 0,
            requesters: Vec::with_capacity(ports),
            rounds: 0,
            grants: 0,
            refusals: 0,
            delivered_bytes: 0.0,
            flows_done: 0,
            loss_max_db: 0.0,
            loss_sum_db: 0.0,
        }
    }

    pub fn ports(&self) -> u32 {
        self.ports.len() as u32
    }

    /// Bytes per ns of every port.
    pub fn rate(&self) -> f64 {
        self.timing.rate
    }

    pub fn table(&self) -> &PathTable {
        &self.table
    }

    /// Queues a flow of `bytes` from input `src` to output `dst` at `now`.
    pub fn request(&mut self, now: Time, token: u32, src: u32, dst: u32, bytes: u64) {
        let flow = Flow {
            token,
            src,
            dst,
            pending: true,
            bytes,
            left: bytes,
            submitted: now,
            setup_ns: 0.0,
            blocked: 0,
            cells: 0,
        };
        let slot = match self.free_flows.pop() {
            Some(s) => {
                self.flows[s as usize] = flow;
                s
            }
            None => {
                self.flows.push(flow);
                self.flows.len() as u32 - 1
            }
        };
        // A port has one request at a time: its first flow with data not yet granted.
        let flows = &self.flows;
        let port = &mut self.ports[src as usize];
        let requesting = match self.timing.switching {
            Switching::Circuit => !port.queue.is_empty(),
            Switching::Tdm { .. } => port.queue.iter().any(|&f| flows[f as usize].pending),
        };
        port.queue.push_back(slot);
        if !requesting {
            port.history.request_seq = self.next_seq;
            self.next_seq += 1;
            self.schedule_round(now);
        }
    }

    fn tdm(&self) -> bool {
        matches!(self.timing.switching, Switching::Tdm { .. })
    }

    /// Slot length (TDM): reconfiguration, then one slot of data.
    fn slot_ns(&self, slot_bytes: u64) -> f64 {
        self.timing.reconfiguration_ns + slot_bytes as f64 / self.timing.rate
    }

    /// A round at `now` (CS) or at the first slot boundary not before it whose round has
    /// not run yet (TDM).
    fn schedule_round(&mut self, now: Time) {
        let at = match self.timing.switching {
            Switching::Circuit => now,
            Switching::Tdm { slot_bytes } => {
                let p = self.slot_ns(slot_bytes);
                let mut k = (now / p).ceil();
                if (k - 1.0) * p >= now {
                    k -= 1.0; // now sits on a boundary that division put just past
                }
                if k * p <= self.last_round {
                    k = (self.last_round / p).round() + 1.0;
                }
                k * p
            }
        };
        if self.round_pending.is_some_and(|t| t <= at) {
            return;
        }
        self.round_pending = Some(at);
        self.timers.push(at, Event::Round);
    }

    pub fn next_time(&self) -> Option<Time> {
        self.timers.peek_time()
    }

    pub fn advance(&mut self, now: Time, out: &mut Vec<Finished>) {
        let first = out.len();
        while let Some((t, ev)) = self.timers.pop_due(now) {
            match ev {
                Event::Finish(f) => self.finish(t, f, out),
                Event::Round if out.len() > first => {
                    // Let the caller react to this instant's deliveries first.
                    self.timers.push(t, Event::Round);
                    break;
                }
                Event::Round => {
                    self.round_pending = None;
                    self.round(t);
                }
            }
        }
    }

    fn finish(&mut self, t: Time, slot: u32, out: &mut Vec<Finished>) {
        let f = self.flows[slot as usize];
        let port = &mut self.ports[f.src as usize];
        debug_assert_eq!(port.queue.front(), Some(&slot));
        port.queue.pop_front();
        let transmit = f.bytes as f64 / self.timing.rate;
        out.push(Finished {
            token: f.token,
            at: t,
            setup_ns: f.setup_ns,
            wait_ns: (t - f.submitted - f.setup_ns - transmit).max(0.0),
            blocked: f.blocked,
            cells: f.cells,
        });
        self.delivered_bytes += f.bytes as f64;
        self.flows_done += 1;
        self.free_flows.push(slot);
        if self.tdm() {
            return; // the next boundary's round is already due: this slot granted a path
        }
        let port = &mut self.ports[f.src as usize];
        let path = port.held.take().expect("a CS flow holds its path");
        if !port.queue.is_empty() {
            port.history.request_seq = self.next_seq;
            self.next_seq += 1;
        }
        self.cells.release(&self.table, path, t);
        if (0..self.ports.len()).any(|p| self.requests(p)) {
            self.schedule_round(t);
        }
    }

    /// Whether port `p` asks for a path in a round now.
    fn requests(&self, p: usize) -> bool {
        let port = &self.ports[p];
        port.held.is_none()
            && port
                .queue
                .front()
                .is_some_and(|&f| self.flows[f as usize].pending)
    }

    fn round(&mut self, t: Time) {
        let tdm_slot = match self.timing.switching {
            Switching::Tdm { slot_bytes } => {
                for p in 0..self.ports.len() {
                    if let Some(path) = self.ports[p].held.take() {
                        self.cells.release(&self.table, path, t);
                    }
                }
                Some(slot_bytes)
            }
            Switching::Circuit => None,
        };
        self.last_round = t;
        let mut requesters = std::mem::take(&mut self.requesters);
        requesters.clear();
        requesters.extend((0..self.ports.len() as u32).filter(|&p| self.requests(p as usize)));
        if requesters.is_empty() {
            self.requesters = requesters;
            return;
        }
        self.rounds += 1;
        let history: Vec<PortHistory> = self.ports.iter().map(|p| p.history).collect();
        self.arbiter.order(&mut requesters, &history);
        let mut first_blocked = None;
        let mut granted_any = false;
        for &p in &requesters {
            self.serviced += 1;
            self.ports[p as usize].history.last_serviced = self.serviced;
            let slot = *self.ports[p as usize].queue.front().expect("requesting");
            let flow = self.flows[slot as usize];
            let Some(path) =
                self.cells
                    .choose(&self.table, p, flow.dst, self.timing.routing, &mut self.rng)
            else {
                self.refusals += 1;
                self.flows[slot as usize].blocked += 1;
                self.ports[p as usize].blocked_since.get_or_insert(t);
                first_blocked.get_or_insert(p);
                continue;
            };
            granted_any = true;
            self.grant(t, p, slot, path, tdm_slot);
        }
        self.arbiter.end_round(first_blocked);
        self.requesters = requesters;
        if let (Some(slot_bytes), true) = (tdm_slot, granted_any) {
            // The next boundary releases this slot's paths and serves whoever waits.
            let p = self.slot_ns(slot_bytes);
            let next = ((t / p).round() + 1.0) * p;
            self.round_pending = Some(next);
            self.timers.push(next, Event::Round);
        }
    }

    fn grant(&mut self, t: Time, p: u32, slot: u32, path: u32, tdm_slot: Option<u64>) {
        self.grants += 1;
        self.cells.take(&self.table, path, t);
        let info = *self.table.info(path);
        self.loss_max_db = self.loss_max_db.max(info.loss_db);
        self.loss_sum_db += info.loss_db;
        let r = self.timing.reconfiguration_ns;
        let flow = &mut self.flows[slot as usize];
        let bytes = tdm_slot.map_or(flow.left, |s| s.min(flow.left));
        flow.left -= bytes;
        flow.pending = flow.left > 0;
        flow.setup_ns += r;
        flow.cells = flow.cells.max(info.cells());
        let done = flow.left == 0;
        let transmit = bytes as f64 / self.timing.rate;
        let port = &mut self.ports[p as usize];
        port.held = Some(path);
        port.history.served_bytes += bytes;
        port.busy_ns += transmit;
        if let Some(since) = port.blocked_since.take() {
            port.blocked_ns += t - since;
        }
        if tdm_slot.is_some() && !(done && port.queue.len() == 1) {
            // Still has data: requests the next slot, behind this round's refused ports.
            port.history.request_seq = self.next_seq;
            self.next_seq += 1;
        }
        if done {
            let end = match tdm_slot {
                // A full slot ends exactly at the next boundary.
                Some(s) if bytes == s => {
                    let p = self.slot_ns(s);
                    ((t / p).round() + 1.0) * p
                }
                _ => t + r + transmit,
            };
            self.timers.push(end, Event::Finish(slot));
        }
    }

    /// Named counters at `now` (the end of a replay).
    pub fn stats(&self, now: Time, out: &mut Vec<(String, f64)>) {
        let span = now.max(f64::MIN_POSITIVE);
        let n = self.ports.len() as f64;
        out.push(("flows".into(), self.flows_done as f64));
        out.push(("rounds".into(), self.rounds as f64));
        out.push(("grants".into(), self.grants as f64));
        out.push(("refusals".into(), self.refusals as f64));
        out.push(("delivered_bytes".into(), self.delivered_bytes));
        out.push((
            "utilisation".into(),
            self.delivered_bytes / (n * self.timing.rate * span),
        ));
        out.push(("max_insertion_loss_db".into(), self.loss_max_db));
        let mean_loss = if self.grants > 0 {
            self.loss_sum_db / self.grants as f64
        } else {
            0.0
        };
        out.push(("mean_insertion_loss_db".into(), mean_loss));
        let mut ratios = Vec::with_capacity(self.ports.len());
        for (i, p) in self.ports.iter().enumerate() {
            let open = p.blocked_since.map_or(0.0, |s| (now - s).max(0.0));
            let ratio = (p.blocked_ns + open) / span;
            ratios.push(ratio);
            out.push((format!("port_{i:02}_blocking_ratio"), ratio));
            out.push((format!("port_{i:02}_busy_ratio"), p.busy_ns / span));
        }
        out.push((
            "blocking_ratio_max".into(),
            ratios.iter().copied().fold(0.0, f64::max),
        ));
        out.push(("blocking_ratio_mean".into(), ratios.iter().sum::<f64>() / n));
    }

    /// Tuning energy of the cells up to `now`, pJ.
    pub fn cell_energy_pj(&self, now: Time) -> f64 {
        self.cells.energy_pj(now)
    }

    /// Tuning power with every cell in use in the bar state, mW.
    pub fn peak_cell_power_mw(&self) -> f64 {
        self.cells.peak_mw()
    }

    pub fn delivered_bytes(&self) -> f64 {
        self.delivered_bytes
    }
}
