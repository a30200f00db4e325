//! Max-min fair bandwidth sharing (Bertsekas & Gallager, "Data Networks", §6.5.2,
//! progressive filling) with incremental re-computation: arrivals and departures only mark
//! their links dirty; `settle` re-solves only the connected component of links and flows
//! reachable from the dirty links, once per instant, however many flows started or ended in
//! it (a collective step starts hundreds of flows at the same time).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Flow handle (slot in the solver's slab).
pub type FlowSlot = u32;

#[derive(Debug, Clone)]
struct Flow {
    links: Vec<u32>,
    rate: f64,
    remaining: f64,
    updated_at: f64,
    live: bool,
    version: u32,
    tag: u32,
    /// Finish time of its current heap entry (NaN: none).
    finish_at: f64,
}

/// Min-heap entry: (time, slot, version); stale versions are skipped.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Finish(f64, FlowSlot, u32);

impl Eq for Finish {}
impl Ord for Finish {
    fn cmp(&self, o: &Self) -> Ordering {
        o.0.total_cmp(&self.0).then_with(|| o.1.cmp(&self.1))
    }
}
impl PartialOrd for Finish {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

pub struct MaxMin {
    capacity: Vec<f64>,
    link_flows: Vec<Vec<FlowSlot>>,
    flows: Vec<Flow>,
    free: Vec<FlowSlot>,
    finish: BinaryHeap<Finish>,
    dirty: Vec<u32>,
    // Scratch state of one re-computation, reused to avoid allocation.
    link_mark: Vec<u32>,
    flow_mark: Vec<u32>,
    epoch: u32,
    rem: Vec<f64>,
    unfixed: Vec<u32>,
    comp_links: Vec<u32>,
    comp_flows: Vec<FlowSlot>,
    shares: BinaryHeap<Share>,
    /// The initial shares of a re-computation as sort keys (share bits << 32 | link),
    /// sorted; merged with `shares` (the entries pushed later).
    initial: Vec<u128>,
    /// Per link, the share of its latest heap entry (a lower bound of its current share).
    pushed: Vec<f64>,
    /// Route vectors of removed flows, reused by `add` (no allocation per flow).
    spare_links: Vec<Vec<u32>>,
    live: usize,
    /// Statistics: flows re-rated over all re-computations.
    pub rerated: u64,
}

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

impl MaxMin {
    /// `capacity[l]` is link l's bandwidth in bytes per ns.
    pub fn new(capacity: Vec<f64>) -> Self {
        let n = capacity.len();
        Self {
            capacity,
            link_flows: vec![Vec::new(); n],
            flows: Vec::new(),
            free: Vec::new(),
            finish: BinaryHeap::new(),
            dirty: Vec::new(),
            link_mark: vec![0; n],
            flow_mark: Vec::new(),
            epoch: 0,
            rem: vec![0.0; n],
            unfixed: vec![0; n],
            comp_links: Vec::new(),
            comp_flows: Vec::new(),
            shares: BinaryHeap::new(),
            initial: Vec::new(),
            pushed: vec![0.0; n],
            spare_links: Vec::new(),
            live: 0,
            rerated: 0,
        }
    }

    /// Adds a flow of `bytes` over `links` at time `now`; `tag` is returned when it drains.
    pub fn add(&mut self, now: f64, links: &[u32], bytes: f64, tag: u32) -> FlowSlot {
        let mut route = self.spare_links.pop().unwrap_or_default();
        route.clear();
        route.extend_from_slice(links);
        self.live += 1;
        let flow = Flow {
            links: route,
            rate: 0.0,
            remaining: bytes,
            updated_at: now,
            live: true,
            version: 0,
            tag,
            finish_at: f64::NAN,
        };
        let slot = match self.free.pop() {
            Some(s) => {
                let version = self.flows[s as usize].version.wrapping_add(1);
                self.flows[s as usize] = Flow { version, ..flow };
                s
            }
            None => {
                self.flows.push(flow);
                self.flow_mark.push(0);
                (self.flows.len() - 1) as FlowSlot
            }
        };
        for &l in links {
            self.link_flows[l as usize].push(slot);
            self.dirty.push(l);
        }
        slot
    }

    fn remove(&mut self, slot: FlowSlot) {
        let links = std::mem::take(&mut self.flows[slot as usize].links);
        for &l in &links {
            let v = &mut self.link_flows[l as usize];
            if let Some(i) = v.iter().position(|&s| s == slot) {
                v.swap_remove(i);
            }
            self.dirty.push(l);
        }
        self.spare_links.push(links);
        self.live -= 1;
        let f = &mut self.flows[slot as usize];
        f.live = false;
        f.version = f.version.wrapping_add(1);
        self.free.push(slot);
    }

    /// Current rate of a flow (bytes/ns); valid after `settle`.
    pub fn rate(&self, slot: FlowSlot) -> f64 {
        self.flows[slot as usize].rate
    }

    /// Re-solves the component reachable from links touched since the last call, at `now`.
    pub fn settle(&mut self, now: f64) {
        if self.dirty.is_empty() {
            return;
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.link_mark.fill(0);
            self.flow_mark.fill(0);
            self.epoch = 1;
        }
        let epoch = self.epoch;
        self.comp_links.clear();
        self.comp_flows.clear();
        let mut stack = std::mem::take(&mut self.dirty);
        while let Some(l) = stack.pop() {
            if self.link_mark[l as usize] == epoch {
                continue;
            }
            self.link_mark[l as usize] = epoch;
            self.comp_links.push(l);
            for &f in &self.link_flows[l as usize] {
                if self.flow_mark[f as usize] != epoch {
                    self.flow_mark[f as usize] = epoch;
                    self.comp_flows.push(f);
                    stack.extend(self.flows[f as usize].links.iter().copied());
                }
            }
        }
        self.dirty = stack;
        self.fill(now);
    }

    /// Progressive filling over the marked component.
    ///
    /// Candidate shares come from two sources: the initial share of every link, sorted once,
    /// and a heap of the entries pushed while filling. Taking the smaller head of the two
    /// pops exactly the sequence one heap holding all entries would pop (equal entries are
    /// identical), so rates are bit-identical to the single-heap solver, at a fraction of
    /// its cost (a component of the halo ring holds ~1000 links, nearly all at one share).
    fn fill(&mut self, now: f64) {
        let mut initial = std::mem::take(&mut self.initial);
        initial.clear();
        for &l in &self.comp_links {
            let n = self.link_flows[l as usize].len() as u32;
            self.rem[l as usize] = self.capacity[l as usize];
            self.unfixed[l as usize] = n;
            if n > 0 {
                let share = self.capacity[l as usize] / f64::from(n);
                self.pushed[l as usize] = share;
                // Ascending keys = ascending (share, link), the order `Share`'s reversed
                // `Ord` makes heaps pop: shares are capacity / count > 0, whose bit
                // patterns order as `total_cmp` does.
                debug_assert!(share > 0.0);
                initial.push(u128::from(share.to_bits()) << 32 | u128::from(l));
            }
        }
        initial.sort_unstable();
        let mut next_initial = 0usize;
        let mut heap = std::mem::take(&mut self.shares);
        heap.clear();
        // Settle the bytes moved at the old rates, then mark every flow of the component
        // unfixed (flow_mark == epoch means "not yet given its new rate").
        for &f in &self.comp_flows {
            let fl = &mut self.flows[f as usize];
            fl.remaining = (fl.remaining - fl.rate * (now - fl.updated_at)).max(0.0);
            fl.updated_at = now;
        }
        let epoch = self.epoch;
        loop {
            let head = initial
                .get(next_initial)
                .map(|&k| Share(f64::from_bits((k >> 32) as u64), k as u32));
            let from_initial = match (head, heap.peek()) {
                (Some(a), Some(b)) => a >= *b,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            let Share(share, l) = if from_initial {
                next_initial += 1;
                head.expect("checked")
            } else {
                heap.pop().expect("peeked")
            };
            let n = self.unfixed[l as usize];
            if n == 0 {
                continue;
            }
            let current = self.rem[l as usize].max(0.0) / f64::from(n);
            if current != share {
                self.pushed[l as usize] = current;
                heap.push(Share(current, l));
                continue;
            }
            for i in 0..self.link_flows[l as usize].len() {
                let f = self.link_flows[l as usize][i];
                if self.flow_mark[f as usize] != epoch {
                    continue; // already fixed
                }
                self.flow_mark[f as usize] = epoch.wrapping_sub(1);
                for &m in &self.flows[f as usize].links {
                    self.rem[m as usize] -= share;
                    self.unfixed[m as usize] -= 1;
                    let k = self.unfixed[m as usize];
                    if k > 0 && m != l {
                        // Shares mostly grow as flows get fixed: a link needs a new entry
                        // only if its share fell below its latest one (stale entries are
                        // refreshed when popped), which keeps the fixing order.
                        let current = self.rem[m as usize].max(0.0) / f64::from(k);
                        if current < self.pushed[m as usize] {
                            self.pushed[m as usize] = current;
                            heap.push(Share(current, m));
                        }
                    }
                }
                let fl = &mut self.flows[f as usize];
                let t = if share > 0.0 {
                    now + fl.remaining / share
                } else {
                    f64::INFINITY
                };
                fl.rate = share;
                self.rerated += 1;
                if t == fl.finish_at {
                    continue; // its heap entry still holds (same rate, same finish time)
                }
                fl.finish_at = t;
                fl.version = fl.version.wrapping_add(1);
                self.finish.push(Finish(t, f, fl.version));
            }
        }
        self.shares = heap;
        self.initial = initial;
        // Re-rated flows leave stale entries behind; drop them once they dominate.
        if self.finish.len() > 4 * self.live + 1024 {
            let flows = &self.flows;
            self.finish
                .retain(|e| flows[e.1 as usize].live && flows[e.1 as usize].version == e.2);
        }
    }

    /// Earliest time a live flow finishes draining (call after `settle`).
    pub fn next_finish(&mut self) -> Option<f64> {
        while let Some(&Finish(t, slot, version)) = self.finish.peek() {
            let f = &self.flows[slot as usize];
            if f.live && f.version == version {
                return Some(t);
            }
            self.finish.pop();
        }
        None
    }

    /// Removes every flow that drains at or before `now`; appends (tag, finish time).
    pub fn pop_finished(&mut self, now: f64, out: &mut Vec<(u32, f64)>) {
        while let Some(t) = self.next_finish() {
            if t > now {
                break;
            }
            let Finish(_, slot, _) = self.finish.pop().expect("peeked");
            out.push((self.flows[slot as usize].tag, t));
            self.remove(slot);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prng::SplitMix64;

    impl MaxMin {
        /// Reference solver: progressive filling over every live flow from scratch,
        /// fixing at each step the link of least (current share, id) with all its unfixed
        /// flows, in the solver's own per-link flow order (the order its arithmetic uses).
        fn reference_rates(&self) -> Vec<(FlowSlot, f64)> {
            let links = self.capacity.len();
            let mut rem = self.capacity.clone();
            let mut unfixed: Vec<u32> = self.link_flows.iter().map(|v| v.len() as u32).collect();
            let mut rate = vec![f64::NAN; self.flows.len()];
            loop {
                let mut best: Option<Share> = None;
                for l in 0..links {
                    if unfixed[l] > 0 {
                        let s = Share(rem[l].max(0.0) / f64::from(unfixed[l]), l as u32);
                        if best.is_none_or(|b| s > b) {
                            best = Some(s);
                        }
                    }
                }
                let Some(Share(share, l)) = best else { break };
                for &f in &self.link_flows[l as usize] {
                    if !rate[f as usize].is_nan() {
                        continue;
                    }
                    rate[f as usize] = share;
                    for &m in &self.flows[f as usize].links {
                        rem[m as usize] -= share;
                        unfixed[m as usize] -= 1;
                    }
                }
            }
            (0..self.flows.len() as FlowSlot)
                .filter(|&f| self.flows[f as usize].live)
                .map(|f| (f, rate[f as usize]))
                .collect()
        }
    }

    /// Random topologies (capacities, routes of 1-4 distinct links) and random arrivals and
    /// departures: after every settle, every live flow's rate equals the from-scratch
    /// reference bit for bit (incremental component re-solving and the merged candidate
    /// order change nothing).
    #[test]
    fn incremental_rates_are_bit_identical_to_a_full_resolve() {
        for seed in 0..300u64 {
            let mut rng = SplitMix64::new(seed);
            let links = 1 + rng.below(24) as usize;
            let caps: Vec<f64> = (0..links)
                .map(|_| [1.0, 2.5, 12.5, 0.3][rng.below(4) as usize] * (1 + rng.below(3)) as f64)
                .collect();
            let mut m = MaxMin::new(caps);
            let mut now = 0.0;
            let mut done = Vec::new();
            for step in 0..60 {
                for _ in 0..rng.below(6) {
                    let hops = 1 + rng.below(4.min(links as u64)) as usize;
                    let mut route: Vec<u32> = (0..links as u32).collect();
                    rng.shuffle(&mut route);
                    route.truncate(hops);
                    let bytes = [100.0, 1000.0, 4096.0, 3.0][rng.below(4) as usize];
                    m.add(now, &route, bytes, step);
                }
                m.settle(now);
                let mut got: Vec<(FlowSlot, f64)> = (0..m.flows.len() as FlowSlot)
                    .filter(|&f| m.flows[f as usize].live)
                    .map(|f| (f, m.rate(f)))
                    .collect();
                got.sort_by_key(|e| e.0);
                let want = m.reference_rates();
                assert_eq!(got.len(), want.len());
                for (g, w) in got.iter().zip(&want) {
                    assert_eq!(g.0, w.0);
                    assert_eq!(g.1.to_bits(), w.1.to_bits(), "seed {seed} step {step}");
                }
                // Advance to the next drain (or a random instant) and remove what drained.
                if let Some(t) = m.next_finish() {
                    now = if rng.below(3) == 0 {
                        t
                    } else {
                        now + (t - now) * 0.5
                    };
                    m.pop_finished(now, &mut done);
                }
            }
        }
    }

    /// The halo-ring shape of the benchmarks: every link at one share (all ties).
    #[test]
    fn ring_of_equal_shares_matches_the_reference() {
        let n = 64u32;
        let mut m = MaxMin::new(vec![12.5; 2 * n as usize]);
        for r in 0..n {
            m.add(0.0, &[r, n + (r + 1) % n], 4096.0, r);
            m.add(0.0, &[r, n + (r + n - 1) % n], 4096.0, n + r);
        }
        m.settle(0.0);
        for (f, w) in m.reference_rates() {
            assert_eq!(m.rate(f).to_bits(), w.to_bits());
            assert_eq!(w, 6.25);
        }
    }

    fn rates(caps: Vec<f64>, routes: &[&[u32]]) -> Vec<f64> {
        let mut m = MaxMin::new(caps);
        let slots: Vec<_> = routes.iter().map(|r| m.add(0.0, r, 1e9, 0)).collect();
        m.settle(0.0);
        slots.iter().map(|&s| m.rate(s)).collect()
    }

    fn close(a: &[f64], b: &[f64]) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() < 1e-9, "{a:?} != {b:?}");
        }
    }

    #[test]
    fn two_flows_on_one_link_share_it_equally() {
        close(&rates(vec![10.0], &[&[0], &[0]]), &[5.0, 5.0]);
    }

    #[test]
    fn bertsekas_gallager_line_network() {
        // Linear network of 3 unit links; flow 0 crosses all, flows 1-3 use one link each.
        // Max-min: every flow gets 1/2 (each link carries the long flow and one short one).
        close(
            &rates(vec![1.0; 3], &[&[0, 1, 2], &[0], &[1], &[2]]),
            &[0.5; 4],
        );
    }

    #[test]
    fn bottleneck_leftover_goes_to_unconstrained_flows() {
        // Link 0 (cap 1) is shared by A and B; link 1 (cap 10) by B and C.
        // A = B = 0.5 (bottleneck link 0); C takes the rest of link 1: 9.5.
        close(
            &rates(vec![1.0, 10.0], &[&[0], &[0, 1], &[1]]),
            &[0.5, 0.5, 9.5],
        );
        // Textbook (Kurose & Ross style): links caps 1, 2; flows {0}, {0,1}, {1}, {1}.
        // Link 0 share 0.5 fixes flows 0,1; link 1 remaining 1.5 over 2 flows = 0.75.
        close(
            &rates(vec![1.0, 2.0], &[&[0], &[0, 1], &[1], &[1]]),
            &[0.5, 0.5, 0.75, 0.75],
        );
    }

    #[test]
    fn departure_reallocates_and_finish_times_follow() {
        let mut m = MaxMin::new(vec![1.0]);
        m.add(0.0, &[0], 100.0, 7);
        m.add(0.0, &[0], 300.0, 8);
        m.settle(0.0);
        // Both at 0.5: the first drains at 200; then the second has 200 left at rate 1.
        assert_eq!(m.next_finish(), Some(200.0));
        let mut out = Vec::new();
        m.pop_finished(200.0, &mut out);
        assert_eq!(out, vec![(7, 200.0)]);
        m.settle(200.0);
        assert_eq!(m.next_finish(), Some(400.0));
        m.pop_finished(1000.0, &mut out);
        assert_eq!(out[1], (8, 400.0));
        assert_eq!(m.next_finish(), None);
    }

    #[test]
    fn untouched_components_are_not_recomputed() {
        let mut m = MaxMin::new(vec![1.0, 1.0]);
        m.add(0.0, &[0], 10.0, 0);
        m.settle(0.0);
        let before = m.rerated;
        m.add(0.0, &[1], 10.0, 1);
        m.settle(0.0);
        assert_eq!(
            m.rerated - before,
            1,
            "only the new flow's component is re-rated"
        );
    }
}
