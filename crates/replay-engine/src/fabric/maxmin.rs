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
#[path = "maxmin_tests.rs"]
mod tests;
