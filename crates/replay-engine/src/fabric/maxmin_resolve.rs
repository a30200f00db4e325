//! The local re-solve behind `MaxMin::settle`: restricted progressive filling over the set S
//! of flows to re-rate, then verification of the max-min characterisation around S
//! (Bertsekas & Gallager, "Data Networks", §6.5.2). The algorithm and why it is exact are
//! described in maxmin.rs.
//!
//! Marks are 64-bit stamps (one per settle, one per filling round) compared for equality,
//! so nothing is cleared between calls and nothing ever wraps.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::{FlowSlot, MaxMin};

/// Relative tolerance of the verification: a link is saturated if its load is within
/// `EPS` of its capacity, and a flow is the fastest on a link if no other flow there beats
/// it by more than a factor `1 + EPS`. It only absorbs rounding noise of the float sums
/// (~1e-15 relative); a larger margin would let a non-bottleneck pass.
const EPS: f64 = 1e-11;

/// Up to this many links, `fill` selects by scanning rather than with candidate queues.
pub(super) const SCAN_LINKS: usize = 16;

#[derive(Debug, Clone, Copy, Default)]
struct FlowMark {
    /// == `Scratch::settle`: the flow is in S.
    member: u64,
    /// == `Scratch::round`: the flow got its rate in this round.
    fixed: u64,
    /// == `Scratch::round`: the flow (not in S) was verified in this round.
    checked: u64,
    /// The rate this round gave it (valid when `fixed` is current).
    new_rate: f64,
}

#[derive(Debug, Clone, Copy, Default)]
struct LinkMark {
    /// == `Scratch::round`: the link carries a flow of S (its fields below are current).
    round: u64,
    /// Capacity not yet given out (to F flows or to fixed S flows).
    rem: f64,
    /// S flows on the link without a rate yet.
    unfixed: u32,
    /// The share of its latest candidate entry (a lower bound of its current share).
    pushed: f64,
}

/// Candidate (share, link) of progressive filling; `Ord` reversed for a min-heap.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Share(f64, u32);
impl Eq for Share {}
impl Ord for Share {
    fn cmp(&self, o: &Self) -> Ordering {
        o.0.total_cmp(&self.0).then_with(|| o.1.cmp(&self.1))
    }
}
impl PartialOrd for Share {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

pub(super) struct Scratch {
    stamp: u64,
    settle: u64,
    round: u64,
    flow: Vec<FlowMark>,
    link: Vec<LinkMark>,
    /// S, in the order its flows joined.
    s_flows: Vec<FlowSlot>,
    /// The links S uses (this round).
    s_links: Vec<u32>,
    /// Flows that failed verification this round (may repeat).
    grow: Vec<FlowSlot>,
    /// Candidates pushed while filling.
    shares: BinaryHeap<Share>,
    /// Initial candidates as sorted keys (share bits << 32 | link), merged with `shares`.
    initial: Vec<u128>,
    next_initial: usize,
    /// `fill` scans up to this many links (`SCAN_LINKS`; tests vary it).
    pub(super) scan_links: usize,
}

impl Scratch {
    pub(super) fn new(links: usize) -> Self {
        Self {
            stamp: 0,
            settle: 0,
            round: 0,
            flow: Vec::new(),
            link: vec![LinkMark::default(); links],
            s_flows: Vec::new(),
            s_links: Vec::new(),
            grow: Vec::new(),
            shares: BinaryHeap::new(),
            initial: Vec::new(),
            next_initial: 0,
            scan_links: SCAN_LINKS,
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

    /// Pops the least candidate of the two sources. Taking the smaller head pops exactly
    /// the sequence one heap holding all entries would (equal entries are identical), while
    /// the bulk of the candidates (the initial ones) costs one sort instead of heap pushes.
    fn next_candidate(&mut self) -> Option<Share> {
        let head = self
            .initial
            .get(self.next_initial)
            .map(|&k| Share(f64::from_bits((k >> 32) as u64), k as u32));
        match (head, self.shares.peek()) {
            (Some(a), Some(b)) if a < *b => self.shares.pop(),
            (Some(a), _) => {
                self.next_initial += 1;
                Some(a)
            }
            (None, _) => self.shares.pop(),
        }
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
    /// Starts a settle: S := the flows on the dirty links.
    pub(super) fn seed_from_dirty_links(&mut self) {
        let sc = &mut self.scratch;
        let settle = sc.next_stamp();
        sc.settle = settle;
        sc.s_flows.clear();
        for &l in &self.dirty {
            // Dedupes the dirty list; round stamps come later, so this mark never collides.
            let lm = &mut sc.link[l as usize];
            if lm.round == settle {
                continue;
            }
            lm.round = settle;
            for &f in &self.link_flows[l as usize] {
                let fm = &mut sc.flow[f as usize];
                if fm.member != settle {
                    fm.member = settle;
                    sc.s_flows.push(f);
                }
            }
        }
        self.dirty.clear();
    }

    /// Step 1: progressive filling over S on the links it uses, each offering what its F
    /// flows leave. Check (a) runs as each link fixes its S flows.
    ///
    /// Each step fixes the link of least (current share, id). Both strategies below make
    /// exactly that sequence of choices, so they give bit-identical rates: a scan of the
    /// links for the handful a departure or an arrival usually touches, candidate queues
    /// for large sets (a collective step, the first settle of a halo ring).
    pub(super) fn fill(&mut self) {
        self.measure_links();
        if self.scratch.s_links.len() <= self.scratch.scan_links {
            self.fill_by_scan();
        } else {
            self.fill_by_queue();
        }
    }

    /// Collects the links S uses, the capacity their F flows leave and their S flows.
    fn measure_links(&mut self) {
        let sc = &mut self.scratch;
        let round = sc.next_stamp();
        sc.round = round;
        let settle = sc.settle;
        sc.s_links.clear();
        for &f in &sc.s_flows {
            for &m in &self.flows[f as usize].links {
                let lm = &mut sc.link[m as usize];
                if lm.round != round {
                    lm.round = round;
                    sc.s_links.push(m);
                }
            }
        }
        for &l in &sc.s_links {
            let mut rem = self.capacity[l as usize];
            let mut unfixed = 0u32;
            for &g in &self.link_flows[l as usize] {
                if sc.flow[g as usize].member == settle {
                    unfixed += 1;
                } else {
                    rem -= self.flows[g as usize].rate;
                }
            }
            sc.link[l as usize] = LinkMark {
                round,
                rem,
                unfixed,
                // Below every share, so that `fix_link` pushes no candidates unless
                // `fill_by_queue` sets it.
                pushed: -1.0,
            };
        }
    }

    /// Selection by scanning every link of S at every step (quadratic, no queues).
    fn fill_by_scan(&mut self) {
        loop {
            let sc = &self.scratch;
            let mut best: Option<(f64, u32)> = None;
            for &l in &sc.s_links {
                let lm = &sc.link[l as usize];
                if lm.unfixed > 0 {
                    let s = share(lm.rem, lm.unfixed);
                    if best.is_none_or(|(bs, bl)| s < bs || (s == bs && l < bl)) {
                        best = Some((s, l));
                    }
                }
            }
            let Some((s, l)) = best else { break };
            self.fix_link(l, s);
        }
    }

    /// Selection by candidate queues: the initial shares sorted once, shares that fall
    /// below a link's latest candidate pushed on a heap, stale candidates refreshed when
    /// popped. The least candidate is never above its link's current share, so a popped
    /// candidate equal to its link's share is the least (share, id) of all links.
    fn fill_by_queue(&mut self) {
        let sc = &mut self.scratch;
        sc.initial.clear();
        for &l in &sc.s_links {
            let lm = &mut sc.link[l as usize];
            lm.pushed = share(lm.rem, lm.unfixed);
            // Ascending keys = ascending (share, link), the order `Share`'s reversed `Ord`
            // makes heaps pop: shares are >= +0.0, whose bits order as `total_cmp` does.
            sc.initial
                .push(u128::from(lm.pushed.to_bits()) << 32 | u128::from(l));
        }
        sc.initial.sort_unstable();
        sc.next_initial = 0;
        sc.shares.clear();
        while let Some(Share(s, l)) = self.scratch.next_candidate() {
            let sc = &mut self.scratch;
            let lm = &mut sc.link[l as usize];
            if lm.unfixed == 0 {
                continue;
            }
            let current = share(lm.rem, lm.unfixed);
            if current != s {
                lm.pushed = current;
                sc.shares.push(Share(current, l));
                continue;
            }
            self.fix_link(l, s);
        }
    }

    /// Gives share `s` to every unfixed S flow on link `l` (their candidate bottleneck), and
    /// flags the F flows on `l` faster than `s` (check (a): `l` would not be a bottleneck).
    fn fix_link(&mut self, l: u32, s: f64) {
        let sc = &mut self.scratch;
        let (settle, round) = (sc.settle, sc.round);
        for &f in &self.link_flows[l as usize] {
            let fm = &mut sc.flow[f as usize];
            if fm.member != settle {
                if self.flows[f as usize].rate > s * (1.0 + EPS) {
                    sc.grow.push(f);
                }
                continue;
            }
            if fm.fixed == round {
                continue;
            }
            fm.fixed = round;
            fm.new_rate = s;
            for &m in &self.flows[f as usize].links {
                let lm = &mut sc.link[m as usize];
                lm.rem -= s;
                lm.unfixed -= 1;
                if lm.unfixed > 0 && m != l {
                    // Shares mostly grow as flows get fixed: a link needs a new entry only
                    // if its share fell below its latest one (stale entries are refreshed
                    // when popped), which keeps the fixing order.
                    let current = share(lm.rem, lm.unfixed);
                    if current < lm.pushed {
                        lm.pushed = current;
                        sc.shares.push(Share(current, m));
                    }
                }
            }
            self.flows[f as usize].bottleneck = l;
        }
    }

    /// Step 2, check (b): every F flow on a link S uses must keep a bottleneck.
    pub(super) fn verify_neighbours(&mut self) {
        let (settle, round) = (self.scratch.settle, self.scratch.round);
        for i in 0..self.scratch.s_links.len() {
            let l = self.scratch.s_links[i] as usize;
            for j in 0..self.link_flows[l].len() {
                let g = self.link_flows[l][j];
                let fm = &mut self.scratch.flow[g as usize];
                if fm.member == settle || fm.checked == round {
                    continue;
                }
                fm.checked = round;
                if !self.keeps_a_bottleneck(g) {
                    self.scratch.grow.push(g);
                }
            }
        }
    }

    /// Whether F flow `g` has a bottleneck under the new rates; remembers the one found.
    fn keeps_a_bottleneck(&mut self, g: FlowSlot) -> bool {
        let b = self.flows[g as usize].bottleneck;
        if self.scratch.link[b as usize].round != self.scratch.round {
            return true; // no S flow on it: the link is exactly as when it was verified
        }
        if self.is_bottleneck(g, b) {
            return true;
        }
        let links = &self.flows[g as usize].links;
        let found = links
            .iter()
            .copied()
            .find(|&m| m != b && self.is_bottleneck(g, m));
        match found {
            Some(m) => {
                self.flows[g as usize].bottleneck = m;
                true
            }
            None => false,
        }
    }

    /// Whether link `m` is saturated and no flow on it is faster than `g` (within `EPS`).
    fn is_bottleneck(&self, g: FlowSlot, m: u32) -> bool {
        let sc = &self.scratch;
        let (mut load, mut max) = (0.0, 0.0f64);
        for &h in &self.link_flows[m as usize] {
            let r = sc.rate_of(h, self.flows[h as usize].rate);
            load += r;
            max = max.max(r);
        }
        let r = sc.rate_of(g, self.flows[g as usize].rate);
        load >= self.capacity[m as usize] * (1.0 - EPS) && r >= max * (1.0 - EPS)
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
