//! Synthetic background traffic: jobs of other users, each a set of endpoints whose nodes
//! send messages of a fixed size to destinations drawn by a pattern, at an offered load
//! given as a fraction of each node's injection bandwidth. Messages go straight onto the
//! fabric (no MPI matching); they contend with the traces' traffic and are dropped when
//! the foreground ends.

use super::network::{background_id, Network};
use super::output::ReplayStats;
use crate::config::{Arrivals, Generator, Pattern};
use crate::error::ReplayError;
use crate::fabric::{Demand, Kind, Submitted, Time, Transfer};
use crate::prng::SplitMix64;

struct Node {
    gen: u32,
    index: u32,
    endpoint: u32,
    /// Mean gap between two of its messages, ns.
    gap_ns: f64,
    /// All-to-all: the offset of its next destination.
    next: u32,
}

struct GenRt {
    spec: Generator,
    rng: SplitMix64,
    /// Permutation pattern: destination index of each node.
    perm: Vec<u32>,
    /// Sum of its nodes' injection rates, bytes per ns.
    rate: f64,
}

/// A background message on the fabric.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    bytes: u64,
}

pub(super) struct Background {
    gens: Vec<GenRt>,
    nodes: Vec<Node>,
    in_flight: Vec<InFlight>,
    free: Vec<u32>,
    /// Job id of generator 0 (generators are numbered after the traces).
    first_job: u32,
    /// The fabric carries the background as load (`leave_to_fabric`): no messages.
    as_load: bool,
}

impl Background {
    pub fn new(
        generators: Vec<Generator>,
        first_job: u32,
        net: &Network,
        seed: u64,
    ) -> Result<Self, ReplayError> {
        let fabric = net.fabric();
        let mut gens = Vec::with_capacity(generators.len());
        let mut nodes = Vec::new();
        for (g, spec) in generators.into_iter().enumerate() {
            let bad = |m: String| ReplayError::BadConfig(format!("background job {g}: {m}"));
            if spec.endpoints.len() < 2 {
                return Err(bad("needs at least 2 nodes".into()));
            }
            if !(spec.traffic.load.is_finite() && (0.0..=1.0).contains(&spec.traffic.load)) {
                return Err(bad(format!("load {} is not in [0, 1]", spec.traffic.load)));
            }
            if spec.traffic.bytes == 0 {
                return Err(bad("message size must be > 0".into()));
            }
            if let Pattern::HotSpot { fraction } = spec.traffic.pattern {
                if !(0.0..=1.0).contains(&fraction) {
                    return Err(bad(format!(
                        "hot-spot fraction {fraction} is not in [0, 1]"
                    )));
                }
            }
            if let (Some(limit), Some(&e)) = (
                fabric.endpoints(),
                spec.endpoints
                    .iter()
                    .find(|&&e| Some(e) >= fabric.endpoints()),
            ) {
                return Err(bad(format!("endpoint {e}: the fabric has {limit}")));
            }
            let mut rng =
                SplitMix64::new(seed ^ 0xB4C6_0000 ^ (g as u64).wrapping_mul(0x9E37_79B9));
            let n = spec.endpoints.len() as u32;
            let perm = if spec.traffic.pattern == Pattern::Permutation {
                derangement(n, &mut rng)
            } else {
                Vec::new()
            };
            let mut rate = 0.0;
            for (i, &e) in spec.endpoints.iter().enumerate() {
                let r = fabric.injection_rate(e);
                if !(r.is_finite() && r > 0.0) {
                    return Err(bad(format!(
                        "endpoint {e} has no finite injection bandwidth to offer a load of"
                    )));
                }
                rate += r;
                nodes.push(Node {
                    gen: g as u32,
                    index: i as u32,
                    endpoint: e,
                    gap_ns: spec.traffic.bytes as f64 / (spec.traffic.load * r),
                    next: 1,
                });
            }
            gens.push(GenRt {
                spec,
                rng,
                perm,
                rate,
            });
        }
        Ok(Self {
            gens,
            nodes,
            in_flight: Vec::new(),
            free: Vec::new(),
            first_job,
            as_load: false,
        })
    }

    /// The mean traffic of every (source, destination) pair of every job: what its pattern
    /// sends on average at its load (periodic arrivals count by their mean rate too).
    pub fn demands(&self) -> Vec<Demand> {
        let mut out = Vec::new();
        for node in &self.nodes {
            let gen = &self.gens[node.gen as usize];
            let traffic = gen.spec.traffic;
            if traffic.load == 0.0 {
                continue;
            }
            let rate = traffic.bytes as f64 / node.gap_ns;
            let ends = &gen.spec.endpoints;
            let n = ends.len() as u32;
            let mut to = |d: u32, share: f64| {
                out.push(Demand {
                    src: node.endpoint,
                    dst: ends[d as usize],
                    bytes_per_ns: rate * share,
                    message_bytes: traffic.bytes,
                });
            };
            let others = |to: &mut dyn FnMut(u32, f64), share: f64| {
                for d in (0..n).filter(|&d| d != node.index) {
                    to(d, share / f64::from(n - 1));
                }
            };
            match traffic.pattern {
                // All-to-all cycles over every other node: uniform on average.
                Pattern::Uniform | Pattern::AllToAll => others(&mut to, 1.0),
                Pattern::NearestNeighbour => to((node.index + 1) % n, 1.0),
                Pattern::Permutation => to(gen.perm[node.index as usize], 1.0),
                Pattern::HotSpot { fraction } if node.index != 0 => {
                    to(0, fraction);
                    others(&mut to, 1.0 - fraction);
                }
                Pattern::HotSpot { .. } => others(&mut to, 1.0),
            }
        }
        out
    }

    /// The fabric carries the background as load (`demands`): no node sends a message.
    pub fn leave_to_fabric(&mut self) {
        self.as_load = true;
    }

    /// Each node's first send (none for a load of 0, nor when the fabric carries the
    /// background as load).
    pub fn first_sends(&mut self) -> Vec<(u32, Time)> {
        let mut out = Vec::new();
        if self.as_load {
            return out;
        }
        for (i, node) in self.nodes.iter().enumerate() {
            let gen = &mut self.gens[node.gen as usize];
            if gen.spec.traffic.load == 0.0 {
                continue;
            }
            let first = match gen.spec.traffic.arrivals {
                Arrivals::Poisson => exponential(&mut gen.rng) * node.gap_ns,
                Arrivals::Periodic => uniform(&mut gen.rng) * node.gap_ns,
            };
            out.push((i as u32, first));
        }
        out
    }

    /// The destination of node `n`'s next message, and when it sends again.
    fn next_message(&mut self, n: u32, now: Time) -> (u32, Time) {
        let node = &mut self.nodes[n as usize];
        let gen = &mut self.gens[node.gen as usize];
        let size = gen.spec.endpoints.len() as u32;
        let uniform_other = |rng: &mut SplitMix64, me: u32| {
            let d = rng.below(u64::from(size - 1)) as u32;
            if d >= me {
                d + 1
            } else {
                d
            }
        };
        let dst = match gen.spec.traffic.pattern {
            Pattern::Uniform => uniform_other(&mut gen.rng, node.index),
            Pattern::NearestNeighbour => (node.index + 1) % size,
            Pattern::AllToAll => {
                let d = (node.index + node.next) % size;
                node.next = node.next % (size - 1) + 1;
                d
            }
            Pattern::Permutation => gen.perm[node.index as usize],
            Pattern::HotSpot { fraction } => {
                if node.index != 0 && uniform(&mut gen.rng) < fraction {
                    0
                } else {
                    uniform_other(&mut gen.rng, node.index)
                }
            }
        };
        let gap = match gen.spec.traffic.arrivals {
            Arrivals::Poisson => exponential(&mut gen.rng) * node.gap_ns,
            Arrivals::Periodic => node.gap_ns,
        };
        (dst, now + gap)
    }

    /// Node `n` sends its next message at `now` (`posted`: its posting number, the receive's
    /// too); returns when it sends again.
    pub fn send(
        &mut self,
        n: u32,
        now: Time,
        posted: u64,
        net: &mut Network,
        stats: &mut ReplayStats,
    ) -> Time {
        let (dst, next) = self.next_message(n, now);
        let node = &self.nodes[n as usize];
        let gen = &self.gens[node.gen as usize];
        let bytes = gen.spec.traffic.bytes;
        let t = Transfer {
            id: 0,
            src: node.endpoint,
            dst: gen.spec.endpoints[dst as usize],
            bytes,
            kind: Kind::Background,
            collective: false,
            job: self.first_job + node.gen,
            src_rank: node.index,
            dst_rank: dst,
            tag: 0,
            send_posted: posted,
            recv_posted: posted,
        };
        let slot = match self.free.pop() {
            Some(s) => {
                self.in_flight[s as usize] = InFlight { bytes };
                s
            }
            None => {
                self.in_flight.push(InFlight { bytes });
                (self.in_flight.len() - 1) as u32
            }
        };
        stats.background_messages += 1;
        stats.background_bytes += bytes;
        let t = Transfer {
            id: background_id(slot),
            ..t
        };
        if let Submitted::At(_) = net.submit(now, &t) {
            self.delivered(slot, stats);
        }
        next
    }

    /// The message in `slot` arrived.
    pub fn delivered(&mut self, slot: u32, stats: &mut ReplayStats) {
        let bytes = self.in_flight[slot as usize].bytes;
        stats.background_delivered += 1;
        stats.background_delivered_bytes += bytes;
        self.free.push(slot);
    }

    /// Bytes the background nodes could have injected by `end` (None without
    /// generators): offered and delivered loads are fractions of it.
    pub fn capacity_bytes(&self, end: Time) -> Option<f64> {
        if self.gens.is_empty() || end <= 0.0 {
            return None;
        }
        Some(self.gens.iter().map(|g| g.rate).sum::<f64>() * end)
    }
}

/// Uniform in [0, 1).
fn uniform(rng: &mut SplitMix64) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Exponential with mean 1 (inverse transform of a uniform in (0, 1]).
fn exponential(rng: &mut SplitMix64) -> f64 {
    -(1.0 - uniform(rng)).ln()
}

/// A random permutation of 0..n without fixed points (Sattolo's algorithm: one n-cycle).
fn derangement(n: u32, rng: &mut SplitMix64) -> Vec<u32> {
    let mut p: Vec<u32> = (0..n).collect();
    for i in (1..n as usize).rev() {
        let j = rng.below(i as u64) as usize;
        p.swap(i, j);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derangements_have_no_fixed_point_and_exponentials_have_mean_one() {
        let mut rng = SplitMix64::new(3);
        for n in 2..20 {
            let p = derangement(n, &mut rng);
            assert!(p.iter().enumerate().all(|(i, &d)| d != i as u32));
            let mut s = p.clone();
            s.sort_unstable();
            assert_eq!(s, (0..n).collect::<Vec<_>>());
        }
        let mean = (0..200_000).map(|_| exponential(&mut rng)).sum::<f64>() / 200_000.0;
        assert!((mean - 1.0).abs() < 0.01, "{mean}");
    }
}
