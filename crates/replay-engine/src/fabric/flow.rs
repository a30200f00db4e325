//! Flow-level model: every transfer is a flow over its route; rates are max-min fair shares
//! of the links (re-solved locally, see maxmin.rs); a flow's last byte arrives one path
//! latency (hops × hop_latency) after it drained. Admission is immediate (packet
//! switching); the circuit fabrics replace exactly that step.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::maxmin::{MaxMin, Stats as MaxMinStats};
use super::topology::Graph;
use super::{Fabric, Submitted, Time, TransferId};
use crate::config::FlowParams;
use crate::prng::SplitMix64;

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

pub struct FlowFabric {
    graph: Graph,
    solver: MaxMin,
    hop_latency_ns: f64,
    /// Bytes per ns of one link (also used for transfers between ranks on one endpoint).
    link_rate: f64,
    rng: SplitMix64,
    /// Transfers that drained and are in flight for their path latency.
    arrivals: BinaryHeap<Arrival>,
    /// Path latency of each draining transfer, by solver tag = transfer id.
    latency_of: Vec<f64>,
    route_buf: Vec<u32>,
    drained: Vec<(u32, f64)>,
    now: Time,
}

impl FlowFabric {
    pub fn new(p: FlowParams, rng: SplitMix64) -> Result<Self, String> {
        if !(p.link_bandwidth_gbps.is_finite() && p.link_bandwidth_gbps > 0.0) {
            return Err("link_bandwidth_gbps must be > 0".into());
        }
        if !(p.hop_latency_ns.is_finite() && p.hop_latency_ns >= 0.0) {
            return Err("hop_latency_ns must be >= 0".into());
        }
        let graph = Graph::new(p.topology, p.duplex, p.routing)?;
        let link_rate = p.link_bandwidth_gbps / 8.0; // Gbit/s = bits/ns → bytes/ns
        let solver = MaxMin::new(vec![link_rate; graph.links() as usize]);
        Ok(Self {
            graph,
            solver,
            hop_latency_ns: p.hop_latency_ns,
            link_rate,
            rng,
            arrivals: BinaryHeap::new(),
            latency_of: Vec::new(),
            route_buf: Vec::new(),
            drained: Vec::new(),
            now: 0.0,
        })
    }

    /// Flows re-rated so far (work done by the incremental max-min solver).
    pub fn rerated(&self) -> u64 {
        self.solver.stats.rerated
    }

    /// Work counters of the max-min solver (settles, filling rounds, expansions).
    pub fn solver_stats(&self) -> MaxMinStats {
        self.solver.stats
    }
}

impl Fabric for FlowFabric {
    fn name(&self) -> &'static str {
        "flow"
    }

    fn endpoints(&self) -> Option<u32> {
        Some(self.graph.endpoints())
    }

    fn route(&mut self, src: u32, dst: u32, links: &mut Vec<u32>) {
        self.graph.route(src, dst, &mut self.rng, links);
    }

    fn control_latency(&mut self, src: u32, dst: u32) -> Time {
        let mut buf = std::mem::take(&mut self.route_buf);
        self.graph.route(src, dst, &mut self.rng, &mut buf);
        let hops = buf.len();
        self.route_buf = buf;
        hops as f64 * self.hop_latency_ns
    }

    fn submit(&mut self, now: Time, id: TransferId, src: u32, dst: u32, bytes: u64) -> Submitted {
        debug_assert!(now >= self.now);
        self.now = now;
        let mut buf = std::mem::take(&mut self.route_buf);
        self.graph.route(src, dst, &mut self.rng, &mut buf);
        if buf.is_empty() {
            // Same endpoint: a copy at link speed, outside the network.
            self.route_buf = buf;
            return Submitted::At(now + bytes as f64 / self.link_rate);
        }
        let latency = buf.len() as f64 * self.hop_latency_ns;
        if bytes == 0 {
            self.route_buf = buf;
            return Submitted::At(now + latency);
        }
        if self.latency_of.len() <= id as usize {
            self.latency_of.resize(id as usize + 1, 0.0);
        }
        self.latency_of[id as usize] = latency;
        self.solver.add(now, &buf, bytes as f64, id);
        self.route_buf = buf;
        Submitted::Later
    }

    fn next_time(&mut self) -> Option<Time> {
        self.solver.settle(self.now);
        let drain = self.solver.next_finish();
        let arrive = self.arrivals.peek().map(|a| a.time());
        match (drain, arrive) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn advance(&mut self, now: Time, delivered: &mut Vec<(TransferId, Time)>) {
        // Drains happen in time order; each departure changes the others' rates, so settle
        // at every distinct drain instant.
        loop {
            self.solver.settle(self.now);
            match self.solver.next_finish() {
                Some(t) if t <= now => {
                    self.now = t;
                    self.drained.clear();
                    self.solver.pop_finished(t, &mut self.drained);
                    for &(id, at) in &self.drained {
                        let arrival = at + self.latency_of[id as usize];
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
            delivered.push((a.id(), a.time()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Duplex, Routing, Topology};

    fn crossbar(duplex: Duplex) -> FlowFabric {
        let p = FlowParams {
            topology: Topology::Crossbar { endpoints: 4 },
            link_bandwidth_gbps: 8.0, // 1 byte per ns
            hop_latency_ns: 10.0,
            duplex,
            routing: Routing::DModK,
        };
        FlowFabric::new(p, SplitMix64::new(0)).unwrap()
    }

    fn run(f: &mut FlowFabric) -> Vec<(TransferId, Time)> {
        let mut out = Vec::new();
        while let Some(t) = f.next_time() {
            f.advance(t, &mut out);
        }
        out
    }

    #[test]
    fn two_flows_into_one_link_each_get_half_the_bandwidth() {
        let mut f = crossbar(Duplex::Full);
        // 0→2 and 1→2 share the down-link of endpoint 2: 1000 B each at 0.5 B/ns = 2000 ns.
        assert_eq!(f.submit(0.0, 0, 0, 2, 1000), Submitted::Later);
        assert_eq!(f.submit(0.0, 1, 1, 2, 1000), Submitted::Later);
        assert_eq!(run(&mut f), vec![(0, 2020.0), (1, 2020.0)]);
        // Alone, the same flow takes 1000 ns + 2 hops.
        f.submit(5000.0, 2, 0, 2, 1000);
        assert_eq!(run(&mut f), vec![(2, 6020.0)]);
    }

    #[test]
    fn full_duplex_directions_do_not_interfere_but_half_duplex_ones_do() {
        let mut full = crossbar(Duplex::Full);
        full.submit(0.0, 0, 0, 1, 1000);
        full.submit(0.0, 1, 1, 0, 1000);
        assert_eq!(run(&mut full), vec![(0, 1020.0), (1, 1020.0)]);
        let mut half = crossbar(Duplex::Half);
        half.submit(0.0, 0, 0, 1, 1000);
        half.submit(0.0, 1, 1, 0, 1000);
        assert_eq!(run(&mut half), vec![(0, 2020.0), (1, 2020.0)]);
    }

    #[test]
    fn a_late_flow_slows_an_early_one_from_its_arrival_on() {
        let mut f = crossbar(Duplex::Full);
        f.submit(0.0, 0, 0, 2, 1000);
        let mut out = Vec::new();
        f.advance(500.0, &mut out); // 500 B sent at full rate
        f.submit(500.0, 1, 1, 2, 250);
        // Both at 0.5 B/ns: flow 1 drains at 1000; flow 0 has 250 B left at 1000, alone → 1250.
        assert_eq!(run(&mut f), vec![(1, 1020.0), (0, 1270.0)]);
    }
}
