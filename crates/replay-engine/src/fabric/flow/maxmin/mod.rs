//! Max-min fair bandwidth sharing with local re-solving.
//!
//! Arrivals and departures only mark their links dirty; `settle` then re-rates, once per
//! instant, the smallest set of flows it can prove sufficient, however many flows started or
//! ended in that instant (a collective step starts hundreds of flows at the same time).
//!
//! **Characterisation** (Bertsekas & Gallager, "Data Networks", 2nd ed., §6.5.2): a feasible
//! allocation is max-min fair iff every flow has a *bottleneck* link — a saturated link
//! (Σ rates = capacity) on which no other flow has a higher rate. The max-min fair
//! allocation is unique.
//!
//! **Local re-solve** (fill.rs, resolve.rs, on scratch.rs). Let S be the flows whose
//! remembered bottleneck is a dirty link (new flows included); every other flow (F) keeps
//! its rate, its finish-queue entry and its byte account untouched.
//! 1. Progressive filling (B&G §6.5.2) over S alone, on the links S uses, each offering its
//!    capacity minus the rates of its F flows. Every S flow is fixed at a saturated link
//!    on which no earlier-fixed S flow is faster: its candidate bottleneck.
//! 2. Verification: (a) no F flow on an S flow's candidate bottleneck is faster than it;
//!    (b) every F flow on a link S uses still has a bottleneck (its remembered one if S left
//!    that link untouched, otherwise a link of its route re-checked under the new rates).
//! 3. The flows failing either test join S, and 1–2 repeat.
//! 4. Commit: the S flows whose rate changed account their bytes at `now` and get a new
//!    finish time; every other flow is left alone.
//!
//! Why it is exact: once verification passes, the allocation is feasible (S fills only what
//! F leaves; links S does not use are unchanged) and every flow has a bottleneck (S flows by
//! 1 + 2a, F flows next to S by 2b, all others by the invariant that each flow's remembered
//! bottleneck was valid after the previous settle and nothing on it changed), so by the
//! characterisation it *is* the max-min allocation. (A dirty link S does not use only lost
//! flows: it stays feasible, and it was no remaining flow's bottleneck.) S only grows and
//! is bounded by the connected component of the dirty links, where no F flow is adjacent
//! and the checks pass trivially: the worst case is the full component solve. Comparisons
//! use a relative tolerance (`EPS`) so that rounding noise of the float sums does not count
//! as a violation; rates therefore equal a from-scratch solve up to rounding, not bit for
//! bit.
//!
//! Everything iterates vectors in insertion order (no hash maps): the same sequence of calls
//! gives bit-identical rates. (Grouping the same arrivals into fewer or more settles at one
//! instant may change rates by rounding, since S depends on it.)

mod bucket;
mod fill;
mod finish_queue;
mod resolve;
mod scratch;

pub use bucket::TokenBucket;
use finish_queue::FinishQueue;

/// Relative tolerance of the verification: a link is saturated if its load is within
/// `EPS` of its capacity, and a flow is the fastest on a link if no other flow there beats
/// it by more than a factor `1 + EPS`. It only absorbs rounding noise of the float sums
/// (~1e-15 relative); a larger margin would let a non-bottleneck pass.
const EPS: f64 = 1e-11;

/// Equal share of `rem` among `n` flows; 0 when nothing is left (never -0.0, whose bits
/// would sort after every positive share).
#[inline]
fn share(rem: f64, n: u32) -> f64 {
    if rem > 0.0 {
        rem / f64::from(n)
    } else {
        0.0
    }
}

/// Flow handle (slot in the solver's slab).
pub type FlowSlot = u32;

/// Route links a flow keeps in its own first cache line (a Dragonfly+ route has at most
/// 8; longer routes live in `Flow::long`).
const INLINE_HOPS: usize = 11;

/// Two cache lines: the first holds what a settle reads of every flow it visits (its rate,
/// bottleneck and route), so visiting a flow costs one miss, not a second one on a heap
/// buffer holding its route; the second what only committing or draining it touches.
#[derive(Debug, Clone, Default)]
#[repr(C, align(64))]
struct Flow {
    rate: f64,
    /// A link of its route that is a bottleneck of this flow under the current rates.
    bottleneck: u32,
    live: bool,
    /// Route length; the route is `hops[..len]` up to `INLINE_HOPS` links, else `long`.
    len: u32,
    hops: [u32; INLINE_HOPS],
    /// The route when it is longer than `INLINE_HOPS` (a torus' long routes); kept
    /// allocated when the slot is reused.
    long: Vec<u32>,
    remaining: f64,
    updated_at: f64,
    /// Finish time of its entry in the finish queue (NaN: none).
    finish_at: f64,
    tag: u32,
}

impl Flow {
    /// The links of its route, in route order.
    #[inline(always)]
    fn links(&self) -> &[u32] {
        let n = self.len as usize;
        if n <= INLINE_HOPS {
            &self.hops[..n]
        } else {
            &self.long
        }
    }
}

/// What the solver keeps per link, in one cache line: a settle visits each dirty link, each
/// link of S and the links of the flows it checks, on fabrics of ~4·10^4 links (dfp-8k), and
/// reading the capacity, the flow list and the re-solve's mark from three arrays cost three
/// misses. The first `INLINE` flows sit in the line too (most links carry fewer), so that
/// reading or changing a short list costs no second miss on a heap buffer.
#[derive(Debug, Clone, Default)]
#[repr(align(64))]
struct Link {
    /// Bandwidth, bytes per ns.
    capacity: f64,
    mark: scratch::LinkMark,
    /// Flows crossing the link, in the order they arrived (swap-removed): the first
    /// `INLINE` in `head`, the rest in `MaxMin::spill` at the link's index.
    len: u32,
    head: [FlowSlot; INLINE],
}

/// Flows a `Link` holds in its own cache line.
const INLINE: usize = 5;

impl Link {
    /// The link's flows in list order; `spill` is `MaxMin::spill`, `l` this link's index
    /// (the spill vector is only read when the list is longer than `INLINE`).
    #[inline(always)]
    fn flows<'a>(
        &'a self,
        l: u32,
        spill: &'a [Vec<FlowSlot>],
    ) -> impl Iterator<Item = FlowSlot> + 'a {
        let n = self.len as usize;
        let rest: &[FlowSlot] = if n > INLINE { &spill[l as usize] } else { &[] };
        self.head[..n.min(INLINE)].iter().chain(rest).copied()
    }

    /// The `i`-th flow of the list (`i < len`).
    #[inline(always)]
    fn flow(&self, l: u32, spill: &[Vec<FlowSlot>], i: usize) -> FlowSlot {
        if i < INLINE {
            self.head[i]
        } else {
            spill[l as usize][i - INLINE]
        }
    }
}

/// Solver statistics (work done by `settle`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Calls of `settle` that had something to re-solve.
    pub settles: u64,
    /// Progressive-filling rounds (one per settle plus one per expansion of S).
    pub rounds: u64,
    /// Flows that joined S because verification failed for them.
    pub expanded: u64,
    /// Flows re-rated (members of S when their settle committed).
    pub rerated: u64,
}

pub struct MaxMin {
    links: Vec<Link>,
    /// Flow lists' tails past `INLINE`, by link (empty for most links).
    spill: Vec<Vec<FlowSlot>>,
    /// Flows per link (= `links[l].len`), densely: adaptive routing reads it for
    /// every candidate link of a route (a Dragonfly+ route weighs 16-34 links), and
    /// neighbouring candidates share cache lines here but not in `links`.
    counts: Vec<u32>,
    flows: Vec<Flow>,
    free: Vec<FlowSlot>,
    finish: FinishQueue,
    dirty: Vec<u32>,
    /// Token buckets by link (bucket.rs); empty when no link has one, which is all the hot
    /// paths check.
    buckets: Vec<Option<bucket::Bucket>>,
    /// When each draining bucket runs empty, by link.
    empties: FinishQueue,
    /// Links whose bucket ran empty since the last settle: every flow on them is re-rated.
    shrunk: Vec<u32>,
    /// Scratch state of the local re-solve, reused to avoid allocation.
    scratch: scratch::Scratch,
    live: usize,
    pub stats: Stats,
}

impl MaxMin {
    /// `capacity[l]` is link l's bandwidth in bytes per ns.
    pub fn new(capacity: Vec<f64>) -> Self {
        let n = capacity.len();
        Self {
            links: capacity
                .into_iter()
                .map(|capacity| Link {
                    capacity,
                    ..Link::default()
                })
                .collect(),
            spill: vec![Vec::new(); n],
            counts: vec![0; n],
            flows: Vec::new(),
            free: Vec::new(),
            finish: FinishQueue::default(),
            dirty: Vec::new(),
            buckets: Vec::new(),
            empties: FinishQueue::default(),
            shrunk: Vec::new(),
            scratch: scratch::Scratch::new(n),
            live: 0,
            stats: Stats::default(),
        }
    }

    /// Adds a flow of `bytes` over `links` at time `now`; `tag` is returned when it drains.
    /// (Inlined: a flow fabric's `submit` runs it for every transfer.)
    #[inline(always)]
    pub fn add(&mut self, now: f64, links: &[u32], bytes: f64, tag: u32) -> FlowSlot {
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.flows.push(Flow::default());
                self.scratch.add_flow();
                (self.flows.len() - 1) as FlowSlot
            }
        };
        self.live += 1;
        let flow = &mut self.flows[slot as usize];
        flow.len = links.len() as u32;
        if links.len() <= INLINE_HOPS {
            flow.hops[..links.len()].copy_from_slice(links);
        } else {
            // A free slot keeps its last long route's vector: no allocation per flow.
            flow.long.clear();
            flow.long.extend_from_slice(links);
        }
        flow.rate = 0.0;
        flow.remaining = bytes;
        flow.updated_at = now;
        flow.live = true;
        flow.tag = tag;
        flow.finish_at = f64::NAN;
        flow.bottleneck = links.first().copied().unwrap_or(0);
        for &l in links {
            let link = &mut self.links[l as usize];
            let n = link.len as usize;
            if n < INLINE {
                link.head[n] = slot;
            } else {
                self.spill[l as usize].push(slot);
            }
            link.len += 1;
            self.counts[l as usize] += 1;
            self.dirty.push(l);
        }
        slot
    }

    /// Unlinks a flow at `now` (its rate counts on its links until then). (Inlined: its
    /// one hot caller, `pop_finished`, runs it for every drained flow.)
    #[inline(always)]
    fn remove(&mut self, slot: FlowSlot, now: f64) {
        // The route is copied out of the slot (taking an empty `long` costs nothing), since
        // unlinking it needs `self` mutably.
        let flow = &mut self.flows[slot as usize];
        let (n, hops, long) = (flow.len as usize, flow.hops, std::mem::take(&mut flow.long));
        let links = if n <= INLINE_HOPS {
            &hops[..n]
        } else {
            &long[..]
        };
        let bucketed = !self.buckets.is_empty();
        for &l in links {
            if bucketed {
                self.account_bucket(l, now);
            }
            self.counts[l as usize] -= 1;
            self.unlink(l, slot);
            self.dirty.push(l);
            if bucketed {
                self.schedule_bucket(l, now);
            }
        }
        self.flows[slot as usize].long = long;
        self.live -= 1;
        self.flows[slot as usize].live = false;
        self.finish.remove(slot);
        self.free.push(slot);
    }

    /// Swap-removes `slot` from link `l`'s flow list (as `Vec::swap_remove` would).
    #[inline(always)]
    fn unlink(&mut self, l: u32, slot: FlowSlot) {
        let link = &mut self.links[l as usize];
        let n = link.len as usize;
        let Some(i) = link.flows(l, &self.spill).position(|s| s == slot) else {
            return;
        };
        let last = if n > INLINE {
            self.spill[l as usize]
                .pop()
                .expect("spill holds the list's tail")
        } else {
            link.head[n - 1]
        };
        if i + 1 < n {
            if i < INLINE {
                link.head[i] = last;
            } else {
                self.spill[l as usize][i - INLINE] = last;
            }
        }
        link.len -= 1;
    }

    /// Removes a live flow before it drained (dropped, or re-routed by the caller);
    /// returns the bytes it had left at `now`.
    pub fn cancel(&mut self, now: f64, slot: FlowSlot) -> f64 {
        let f = &self.flows[slot as usize];
        debug_assert!(f.live, "cancel of a flow that is not live");
        let left = (f.remaining - f.rate * (now - f.updated_at)).max(0.0);
        self.remove(slot, now);
        left
    }

    /// Capacity of a link in bytes per ns (a bucketed link's peak while its bucket holds
    /// tokens, its rate once empty; see bucket.rs).
    pub fn capacity(&self, link: u32) -> f64 {
        self.links[link as usize].capacity
    }

    /// Flows crossing a link now (arrivals and departures count at once, before `settle`).
    pub fn flows_on(&self, link: u32) -> usize {
        self.counts[link as usize] as usize
    }

    /// Flows live now.
    pub fn live(&self) -> usize {
        self.live
    }

    /// Current rate of a flow (bytes/ns); valid after `settle`.
    pub fn rate(&self, slot: FlowSlot) -> f64 {
        self.flows[slot as usize].rate
    }

    /// Re-rates the flows affected by the arrivals and departures since the last call, at
    /// `now` (see the module comment). A no-op when nothing changed.
    #[inline]
    pub fn settle(&mut self, now: f64) {
        // Most calls (a flow fabric's next_time and advance) find nothing changed: the check
        // inlines into the caller, so they do not pay a call of the large re-solve.
        if !self.dirty.is_empty() {
            self.re_rate(now);
        }
    }

    fn re_rate(&mut self, now: f64) {
        self.stats.settles += 1;
        self.seed_from_dirty_links();
        loop {
            self.stats.rounds += 1;
            self.fill(now);
            self.verify_neighbours();
            if !self.expand() {
                break;
            }
        }
        self.commit(now);
    }

    /// Earliest time a live flow finishes draining (call after `settle`).
    pub fn next_finish(&self) -> Option<f64> {
        self.finish.peek().map(|e| e.0)
    }

    /// Removes every flow that drains at or before `now`; appends (tag, finish time).
    pub fn pop_finished(&mut self, now: f64, out: &mut Vec<(u32, f64)>) {
        while let Some((t, slot)) = self.finish.peek() {
            if t > now {
                break;
            }
            out.push((self.flows[slot as usize].tag, t));
            self.remove(slot, t);
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod bucket_tests;
