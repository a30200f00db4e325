//! Flow-level network shared by the packet-switched models: every transfer is a flow over
//! the route its topology picks; rates are max-min fair shares of the links (re-solved
//! locally, see maxmin/); a flow's last byte arrives one path latency after it drained.
//! Admission is immediate (packet switching); the circuit models replace exactly that step.
//!
//! A topology ([`Topology`]) numbers its links, gives each a class (capacity and latency
//! per class: terminal / local / global links of a Dragonfly+, levels of a tree), and
//! routes; adaptive routings read the current load through [`LinkLoad`].

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::maxmin::{MaxMin, TokenBucket};
use crate::fabric::{
    Delivery, Fabric, Locality, Submitted, Time, Transfer, TransferId, TransferInfo,
};
use crate::prng::SplitMix64;

/// A route a topology picked: links crossed, path latency and path class.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Route {
    pub links: Vec<u32>,
    pub latency_ns: f64,
    /// Index into `Topology::path_classes`.
    pub path: u8,
}

/// The current load of the links, for adaptive routing.
pub struct LinkLoad<'a> {
    solver: &'a MaxMin,
}

impl LinkLoad<'_> {
    /// Flows crossing the link now.
    pub fn flows(&self, link: u32) -> usize {
        self.solver.flows_on(link)
    }

    /// The link's capacity, bytes per ns.
    pub fn capacity(&self, link: u32) -> f64 {
        self.solver.capacity(link)
    }
}

/// Link classes of a topology: names and per-class capacity (bytes/ns).
#[derive(Debug, Clone, PartialEq)]
pub struct LinkClasses {
    pub names: &'static [&'static str],
    /// Class of every link, by link id.
    pub of_link: Vec<u8>,
    /// Capacity of each class, bytes per ns (its sustained rate when it has a bucket).
    pub capacity: Vec<f64>,
    /// A token bucket in front of every link of a class, by class (empty: none anywhere).
    pub buckets: Vec<Option<TokenBucket>>,
}

pub trait Topology: Send {
    fn endpoints(&self) -> u32;
    fn link_classes(&self) -> &LinkClasses;
    /// Picks the route of a transfer from `src` to `dst` (src != dst) now.
    fn route(
        &mut self,
        src: u32,
        dst: u32,
        load: &LinkLoad<'_>,
        rng: &mut SplitMix64,
        out: &mut Route,
    );
    /// One-way latency of a control message between two endpoints (minimal path; no
    /// random choice and no state, so control messages never shift data routes).
    fn control_latency(&self, src: u32, dst: u32) -> f64;
    fn locality(&self, _endpoint: u32) -> Option<Locality> {
        None
    }
    fn path_classes(&self) -> &'static [&'static str] {
        &["direct"]
    }
    /// Bytes per ns of a copy between two ranks on one endpoint.
    fn local_rate(&self) -> f64;
    /// Bytes per ns an endpoint can inject.
    fn injection_rate(&self, endpoint: u32) -> f64;
    /// Latency of `bytes` on a route this topology picked, beyond the drain at its rate:
    /// the route's latency, plus what depends on the size (e.g. store-and-forward of the
    /// first packet on every hop).
    fn transfer_latency(&self, route: &Route, _bytes: u64) -> f64 {
        route.latency_ns
    }
    /// The topology's own counters at the end of a replay (routes per path class, …).
    fn stats(&self, _out: &mut Vec<(String, f64)>) {}
}

/// A delivery (time, transfer) as one min-heap key, time bits << 32 | id: times are
/// >= +0.0, whose bit patterns order as the numbers do, so deliveries pop by time, then id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Arrival(Reverse<u128>);

impl Arrival {
    fn new(t: Time, id: TransferId) -> Self {
        debug_assert!(t >= 0.0 && t.is_sign_positive(), "arrival time {t}");
        Self(Reverse(u128::from(t.to_bits()) << 32 | u128::from(id)))
    }

    fn time(self) -> Time {
        f64::from_bits((self.0 .0 >> 32) as u64)
    }

    fn id(self) -> TransferId {
        self.0 .0 as u32
    }
}

pub struct FlowNetwork<T: Topology> {
    topology: T,
    solver: MaxMin,
    rng: SplitMix64,
    /// Transfers that drained and are in flight for their path latency.
    arrivals: BinaryHeap<Arrival>,
    /// Path latency, hops and path class of each draining transfer, by solver tag =
    /// transfer id.
    pending: Vec<(f64, u32, u8)>,
    route: Route,
    drained: Vec<(u32, f64)>,
    /// Bytes submitted per link (utilisation statistics).
    carried: Vec<f64>,
    flows: u64,
    now: Time,
}

impl<T: Topology> FlowNetwork<T> {
    pub fn new(topology: T, rng: SplitMix64) -> Self {
        let classes = topology.link_classes();
        let capacity: Vec<f64> = classes
            .of_link
            .iter()
            .map(|&c| classes.capacity[c as usize])
            .collect();
        let links = capacity.len();
        let mut solver = MaxMin::new(capacity);
        for (l, &c) in classes.of_link.iter().enumerate() {
            if let Some(Some(bucket)) = classes.buckets.get(c as usize) {
                solver.set_bucket(l as u32, *bucket);
            }
        }
        Self {
            topology,
            solver,
            rng,
            arrivals: BinaryHeap::new(),
            pending: Vec::new(),
            route: Route::default(),
            drained: Vec::new(),
            carried: vec![0.0; links],
            flows: 0,
            now: 0.0,
        }
    }

    pub fn topology(&self) -> &T {
        &self.topology
    }

    /// Picks the route from `src` to `dst` now (what `submit` would use), for callers that
    /// compose a flow network into a larger model.
    pub fn route(&mut self, src: u32, dst: u32, out: &mut Route) {
        let load = LinkLoad {
            solver: &self.solver,
        };
        self.topology.route(src, dst, &load, &mut self.rng, out);
    }
}

impl<T: Topology> Fabric for FlowNetwork<T> {
    fn endpoints(&self) -> Option<u32> {
        Some(self.topology.endpoints())
    }

    fn locality(&self, endpoint: u32) -> Option<Locality> {
        self.topology.locality(endpoint)
    }

    fn injection_rate(&self, endpoint: u32) -> f64 {
        self.topology.injection_rate(endpoint)
    }

    fn control_at_once(&self) -> bool {
        true
    }

    fn submit(&mut self, now: Time, t: &Transfer) -> Submitted {
        let (src, dst) = (t.src, t.dst);
        if t.kind.is_control() {
            let d = if src == dst {
                0.0
            } else {
                self.topology.control_latency(src, dst)
            };
            return Submitted::At(now + d);
        }
        debug_assert!(now >= self.now);
        self.now = now;
        if src == dst {
            // Same endpoint: a copy at memory speed, outside the network.
            return Submitted::At(now + t.bytes as f64 / self.topology.local_rate());
        }
        let load = LinkLoad {
            solver: &self.solver,
        };
        let route = &mut self.route;
        self.topology.route(src, dst, &load, &mut self.rng, route);
        let latency = self.topology.transfer_latency(route, t.bytes);
        if t.bytes == 0 {
            return Submitted::At(now + latency);
        }
        let id = t.id as usize;
        if self.pending.len() <= id {
            self.pending.resize(id + 1, (0.0, 0, 0));
        }
        self.pending[id] = (latency, route.links.len() as u32, route.path);
        for &l in &route.links {
            self.carried[l as usize] += t.bytes as f64;
        }
        self.flows += 1;
        self.solver.add(now, &route.links, t.bytes as f64, t.id);
        Submitted::Later
    }

    fn next_time(&mut self) -> Option<Time> {
        self.solver.settle(self.now);
        let drain = self.solver.next_event();
        let arrive = self.arrivals.peek().map(|a| a.time());
        match (drain, arrive) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn advance(&mut self, now: Time, delivered: &mut Vec<Delivery>) {
        // Drains (and buckets running empty) happen in time order; each changes the others'
        // rates, so settle at every distinct instant, after all that happen at it.
        loop {
            self.solver.settle(self.now);
            match self.solver.next_event() {
                Some(t) if t <= now => {
                    self.now = t;
                    self.drained.clear();
                    self.solver.pop_finished(t, &mut self.drained);
                    self.solver.empty_buckets(t);
                    for &(id, at) in &self.drained {
                        let arrival = at + self.pending[id as usize].0;
                        self.arrivals.push(Arrival::new(arrival, id));
                    }
                }
                _ => break,
            }
        }
        self.now = self.now.max(now);
        while let Some(&a) = self.arrivals.peek() {
            if a.time() > now {
                break;
            }
            self.arrivals.pop();
            let (_, hops, path) = self.pending[a.id() as usize];
            let info = TransferInfo {
                hops,
                path,
                ..TransferInfo::default()
            };
            delivered.push(Delivery {
                id: a.id(),
                at: a.time(),
                info,
            });
        }
    }

    fn reports_transfers(&self) -> bool {
        self.topology.path_classes().len() > 1
    }

    fn path_classes(&self) -> &'static [&'static str] {
        self.topology.path_classes()
    }

    fn stats(&self, now: Time, out: &mut Vec<(String, f64)>) {
        out.push(("flows".into(), self.flows as f64));
        let s = self.solver.stats;
        out.push(("maxmin_settles".into(), s.settles as f64));
        out.push(("maxmin_rerated".into(), s.rerated as f64));
        self.topology.stats(out);
        let classes = self.topology.link_classes();
        for (c, name) in classes.names.iter().enumerate() {
            let links: Vec<usize> = (0..classes.of_link.len())
                .filter(|&l| classes.of_link[l] as usize == c)
                .collect();
            if links.is_empty() || now <= 0.0 {
                continue;
            }
            let cap = classes.capacity[c] * now;
            let util: Vec<f64> = links.iter().map(|&l| self.carried[l] / cap).collect();
            let mean = util.iter().sum::<f64>() / util.len() as f64;
            let max = util.iter().copied().fold(0.0, f64::max);
            out.push((format!("utilisation_{name}_mean"), mean));
            out.push((format!("utilisation_{name}_max"), max));
        }
    }
}
