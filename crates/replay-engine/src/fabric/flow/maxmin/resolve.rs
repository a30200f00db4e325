//! The local re-solve behind `MaxMin::settle`: restricted progressive filling over the set S
//! of flows to re-rate, then verification of the max-min characterisation around S
//! (Bertsekas & Gallager, "Data Networks", §6.5.2). The algorithm and why it is exact are
//! described in mod.rs.
//!
//! Step 1 (filling) is in fill.rs; this file holds the scratch state and steps 2-4.
//!
//! Marks are 64-bit stamps (one per settle, one per filling round) compared for equality,
//! so nothing is cleared between calls and nothing ever wraps.

use std::collections::BinaryHeap;

use super::{FlowSlot, MaxMin};
use fill::Candidate;
pub(super) use fill::SCAN_LINKS;

#[path = "fill.rs"]
mod fill;

/// Relative tolerance of the verification: a link is saturated if its load is within
/// `EPS` of its capacity, and a flow is the fastest on a link if no other flow there beats
/// it by more than a factor `1 + EPS`. It only absorbs rounding noise of the float sums
/// (~1e-15 relative); a larger margin would let a non-bottleneck pass.
const EPS: f64 = 1e-11;

#[derive(Debug, Clone, Copy, Default)]
struct FlowMark {
    /// == `Scratch::settle`: the flow is in S.
    member: u64,
    /// == `Scratch::round`: the flow got its rate in this round.
    fixed: u64,
    /// == `Scratch::round`: the flow (not in S) was met on a link of S in this round.
    checked: u64,
    /// The rate this round gave it (valid when `fixed` is current).
    new_rate: f64,
}

/// The re-solve's state of a link (kept in `Link`, beside its flows and capacity).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct LinkMark {
    /// == `Scratch::round`: the link carries a flow of S (its fields below are current).
    round: u64,
    /// Capacity not yet given out (to F flows or to fixed S flows).
    rem: f64,
    /// S flows on the link without a rate yet.
    unfixed: u32,
    /// The share of its latest candidate entry (a lower bound of its current share).
    pushed: f64,
}

pub(super) struct Scratch {
    stamp: u64,
    settle: u64,
    round: u64,
    flow: Vec<FlowMark>,
    /// S, in the order its flows joined.
    s_flows: Vec<FlowSlot>,
    /// The links S uses (this round).
    s_links: Vec<u32>,
    /// S flows without a rate yet (this round): filling stops when none is left.
    unfixed_flows: usize,
    /// F flows on the links S uses whose remembered bottleneck is one of them (this
    /// round), in the order check (b) verifies them.
    neighbours: Vec<FlowSlot>,
    /// Flows that failed verification this round (may repeat).
    grow: Vec<FlowSlot>,
    /// Candidates of `fill_by_queue`.
    candidates: BinaryHeap<Candidate>,
    /// `fill` scans up to this many links (`SCAN_LINKS`; tests vary it).
    pub(super) scan_links: usize,
    /// Per link: (round, load, fastest rate) under the allocation being verified. Rates
    /// do not change while a round verifies, so each link is summed once per round, not
    /// once per flow checked on it (n flows on one link: n sums, not n²).
    sums: Vec<(u64, f64, f64)>,
}

impl Scratch {
    pub(super) fn new(links: usize) -> Self {
        Self {
            stamp: 0,
            settle: 0,
            round: 0,
            flow: Vec::new(),
            s_flows: Vec::new(),
            s_links: Vec::new(),
            unfixed_flows: 0,
            neighbours: Vec::new(),
            grow: Vec::new(),
            candidates: BinaryHeap::new(),
            scan_links: SCAN_LINKS,
            sums: vec![(0, 0.0, 0.0); links],
        }
    }

    /// Makes room for one more flow slot.
    pub(super) fn add_flow(&mut self) {
        self.flow.push(FlowMark::default());
    }

    fn next_stamp(&mut self) -> u64 {
        self.stamp += 1;
        self.stamp
    }

    /// Rate a flow has under the allocation being verified (new rate for S flows).
    fn rate_of(&self, f: FlowSlot, committed: f64) -> f64 {
        let m = &self.flow[f as usize];
        if m.member == self.settle {
            m.new_rate
        } else {
            committed
        }
    }
}

/// Equal share of `rem` among `n` flows; 0 when nothing is left (never -0.0, whose bits
/// would sort after every positive share).
fn share(rem: f64, n: u32) -> f64 {
    if rem > 0.0 {
        rem / f64::from(n)
    } else {
        0.0
    }
}

impl MaxMin {
    /// Starts a settle: S := the flows whose remembered bottleneck is a dirty link (a new
    /// flow remembers its first link). The other flows on dirty links keep a bottleneck
    /// nothing touched unless S changes it, which verification then finds; seeding them
    /// too would re-rate every long flow sharing a link with each short one.
    pub(super) fn seed_from_dirty_links(&mut self) {
        let sc = &mut self.scratch;
        let settle = sc.next_stamp();
        sc.settle = settle;
        sc.s_flows.clear();
        for &l in &self.dirty {
            // Dedupes the dirty list; round stamps come later, so this mark never collides.
            let link = &mut self.links[l as usize];
            if link.mark.round == settle {
                continue;
            }
            link.mark.round = settle;
            for f in link.flows(l, &self.spill) {
                let fm = &mut sc.flow[f as usize];
                if fm.member != settle && self.flows[f as usize].bottleneck == l {
                    fm.member = settle;
                    sc.s_flows.push(f);
                }
            }
        }
        self.dirty.clear();
    }

    /// Step 2, check (b): every F flow on a link S uses must keep a bottleneck. Those whose
    /// remembered bottleneck S left untouched keep it (the link is exactly as when it was
    /// verified): `measure_links` listed only the others.
    pub(super) fn verify_neighbours(&mut self) {
        for i in 0..self.scratch.neighbours.len() {
            let g = self.scratch.neighbours[i];
            if !self.keeps_a_bottleneck(g) {
                self.scratch.grow.push(g);
            }
        }
    }

    /// Whether F flow `g`, whose remembered bottleneck S touches, has a bottleneck under
    /// the new rates; remembers the one found.
    fn keeps_a_bottleneck(&mut self, g: FlowSlot) -> bool {
        let b = self.flows[g as usize].bottleneck;
        if self.is_bottleneck(g, b) {
            return true;
        }
        for i in 0..self.flows[g as usize].links().len() {
            let m = self.flows[g as usize].links()[i];
            if m != b && self.is_bottleneck(g, m) {
                self.flows[g as usize].bottleneck = m;
                return true;
            }
        }
        false
    }

    /// Whether link `m` is saturated and no flow on it is faster than `g` (within `EPS`).
    /// (Inlined: verification runs it for most F flows next to S.)
    #[inline(always)]
    fn is_bottleneck(&mut self, g: FlowSlot, m: u32) -> bool {
        let (load, max) = self.load_and_max(m);
        let r = self.scratch.rate_of(g, self.flows[g as usize].rate);
        load >= self.links[m as usize].capacity * (1.0 - EPS) && r >= max * (1.0 - EPS)
    }

    /// Σ rates and the fastest rate on link `m` under the allocation being verified.
    fn load_and_max(&mut self, m: u32) -> (f64, f64) {
        let sc = &self.scratch;
        let (at, load, max) = sc.sums[m as usize];
        if at == sc.round {
            return (load, max);
        }
        let (mut load, mut max) = (0.0, 0.0f64);
        for h in self.links[m as usize].flows(m, &self.spill) {
            let r = sc.rate_of(h, self.flows[h as usize].rate);
            load += r;
            max = max.max(r);
        }
        self.scratch.sums[m as usize] = (sc.round, load, max);
        (load, max)
    }

    /// Step 3: the flows that failed verification join S. Returns whether S grew.
    pub(super) fn expand(&mut self) -> bool {
        let sc = &mut self.scratch;
        let before = sc.s_flows.len();
        for &g in &sc.grow {
            let fm = &mut sc.flow[g as usize];
            if fm.member != sc.settle {
                fm.member = sc.settle;
                sc.s_flows.push(g);
            }
        }
        sc.grow.clear();
        let added = sc.s_flows.len() - before;
        self.stats.expanded += added as u64;
        added > 0
    }

    /// Step 4: S flows take their new rates; a flow whose rate did not change keeps its
    /// byte account and finish-queue entry untouched (its finish time still holds).
    pub(super) fn commit(&mut self, now: f64) {
        let sc = &self.scratch;
        for &f in &sc.s_flows {
            let r = sc.flow[f as usize].new_rate;
            let fl = &mut self.flows[f as usize];
            if r.to_bits() == fl.rate.to_bits() && !fl.finish_at.is_nan() {
                continue;
            }
            fl.remaining = (fl.remaining - fl.rate * (now - fl.updated_at)).max(0.0);
            fl.updated_at = now;
            fl.rate = r;
            let t = if r > 0.0 {
                now + fl.remaining / r
            } else {
                f64::INFINITY
            };
            if t == fl.finish_at {
                continue; // its queue entry still holds
            }
            fl.finish_at = t;
            self.finish.set(f, t);
        }
        self.stats.rerated += sc.s_flows.len() as u64;
    }
}
