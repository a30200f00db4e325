//! Closed-form collectives on stateless, contention-free fabrics (the α-β form).
//!
//! There a message's cost depends only on when its two sides are posted (eager: the data
//! leaves at post + o and arrives α + nβ later; rendezvous without handshake: it leaves
//! when both sides are posted), so a collective instance is a max-plus computation over its
//! members' entry times. Matching within an instance is FIFO per (sender, receiver) in
//! program order, which does not depend on time either. A `Plan` fixes, once per collective
//! shape, the message pairing and an order in which every step's inputs are ready; each
//! instance is then evaluated in one pass over flat arrays, without requests, queues or
//! events — exactly the times the event-driven path computes (same expressions).
//!
//! Causality: the engine can only evaluate when the last member enters, so a plan is used
//! only if every member's exit depends on every member's entry (`all_dependent`; true for
//! allreduce, allgather, alltoall, barrier, …; false e.g. for a bcast root sending eagerly).

use std::rc::Rc;

use crate::collectives::{Algo, CollKind, Step};
use crate::fabric::Time;
use crate::hash::FastMap;

#[path = "plan_order.rs"]
mod order;
use order::topological;

/// The shape of one collective instance, which fixes its schedules and plan: kind, size,
/// root, bytes, algorithm, segment size, fanout.
pub type ShapeKey = (CollKind, u32, u32, u64, Algo, u64, u32);

/// One step of one rank, a node of the plan.
#[derive(Debug, Clone, Copy)]
struct Node {
    rank: u32,
    /// Its messages: sends `send_lo..send_hi`, receives `recv_lo..recv_hi` (global ids).
    send_lo: u32,
    send_hi: u32,
    recv_lo: u32,
    recv_hi: u32,
    reduce_bytes: u64,
    /// The rank's last node: its start is the exit.
    terminal: bool,
}

#[derive(Debug, Clone, Copy)]
struct Msg {
    /// Node that posts the send / the matching receive.
    send_node: u32,
    recv_node: u32,
    rndv: bool,
    /// n·β and the host overhead o + n·O of this message.
    n_beta: f64,
    o: f64,
}

#[derive(Debug)]
pub struct Plan {
    p: u32,
    alpha: f64,
    gamma: f64,
    nodes: Vec<Node>,
    /// Node ids in an order where each node's inputs are known. Node `first[r] + j` is step
    /// j of rank r; node `first[r + 1] - 1` is its terminal node (its start is the exit).
    order: Vec<u32>,
    first: Vec<u32>,
    msgs: Vec<Msg>,
    /// Per receive id, its message id (sends are message ids directly).
    recv_msg: Vec<u32>,
    /// `order` compiled for `evaluate`: the non-terminal nodes with their terms inline.
    program: Vec<Compiled>,
    terms: Vec<Term>,
}

/// One non-terminal node of the evaluation program: its start slot, its terms
/// `terms[lo..mid]` (receives) and `terms[mid..hi]` (sends), and its reduction time
/// (bytes · γ, the product the event path computes).
#[derive(Debug, Clone, Copy)]
struct Compiled {
    node: u32,
    lo: u32,
    mid: u32,
    hi: u32,
    reduce_ns: f64,
}

/// A message as `evaluate` reads it: the partner node's start slot and the costs.
#[derive(Debug, Clone, Copy)]
struct Term {
    partner: u32,
    rndv: bool,
    n_beta: f64,
    o: f64,
}

impl Term {
    /// When a receive posted at `t` completes, its send posted at `sent`.
    #[inline(always)]
    fn recv_done(&self, t: Time, sent: Time, alpha: f64) -> Time {
        if self.rndv {
            later(sent, t) + alpha + self.n_beta + self.o
        } else {
            later(t, sent + self.o + alpha + self.n_beta) + self.o
        }
    }

    /// When a send posted at `t` completes, its receive posted at `posted`.
    #[inline(always)]
    fn send_done(&self, t: Time, posted: Time, alpha: f64) -> Time {
        if self.rndv {
            later(t, posted) + alpha + self.n_beta
        } else {
            t + self.o
        }
    }
}

/// max for times (never NaN here): one compare, where `f64::max` also handles NaN.
#[inline]
fn later(a: f64, b: f64) -> f64 {
    if b > a {
        b
    } else {
        a
    }
}

/// Host and fabric costs; a transfer submitted at `now` arrives at `now + α + n·β`.
#[derive(Debug, Clone, Copy)]
pub struct Costs {
    pub alpha_ns: f64,
    pub beta_ns_per_byte: f64,
    pub overhead_ns: f64,
    pub overhead_ns_per_byte: f64,
    pub gamma_ns_per_byte: f64,
    pub eager_threshold: u64,
}

impl Plan {
    /// The plan of a collective whose members run `scheds` (indexed by communicator rank);
    /// None if the schedules do not pair up, cannot complete, or some exit would not depend
    /// on every entry.
    pub fn build(scheds: &[Rc<[Step]>], costs: &Costs) -> Option<Plan> {
        let p = scheds.len();
        let mut nodes = Vec::new();
        let mut first = Vec::with_capacity(p + 1);
        let mut msgs: Vec<Msg> = Vec::new();
        let mut recvs: Vec<(u32, u32)> = Vec::new(); // (node, src)
                                                     // FIFO pairing per (src, dst): k-th send ↔ k-th receive.
        let mut chan: FastMap<(u32, u32), (Vec<u32>, Vec<u32>)> = FastMap::default();
        for (r, steps) in scheds.iter().enumerate() {
            first.push(nodes.len() as u32);
            for step in steps.iter() {
                let id = nodes.len() as u32;
                let (send_lo, recv_lo) = (msgs.len() as u32, recvs.len() as u32);
                for &(peer, bytes) in &step.sends {
                    if peer as usize == r {
                        continue;
                    }
                    if peer as usize >= p {
                        return None;
                    }
                    chan.entry((r as u32, peer))
                        .or_default()
                        .0
                        .push(msgs.len() as u32);
                    msgs.push(Msg {
                        send_node: id,
                        recv_node: u32::MAX,
                        rndv: bytes > costs.eager_threshold,
                        // The engine's expressions, so both paths give bit-identical times.
                        n_beta: bytes as f64 * costs.beta_ns_per_byte,
                        o: costs.overhead_ns + bytes as f64 * costs.overhead_ns_per_byte,
                    });
                }
                for &(peer, _) in &step.recvs {
                    if peer as usize == r {
                        continue;
                    }
                    if peer as usize >= p {
                        return None;
                    }
                    chan.entry((peer, r as u32))
                        .or_default()
                        .1
                        .push(recvs.len() as u32);
                    recvs.push((id, peer));
                }
                nodes.push(Node {
                    rank: r as u32,
                    send_lo,
                    send_hi: msgs.len() as u32,
                    recv_lo,
                    recv_hi: recvs.len() as u32,
                    reduce_bytes: step.reduce_bytes,
                    terminal: false,
                });
            }
            nodes.push(Node {
                rank: r as u32,
                send_lo: msgs.len() as u32,
                send_hi: msgs.len() as u32,
                recv_lo: recvs.len() as u32,
                recv_hi: recvs.len() as u32,
                reduce_bytes: 0,
                terminal: true,
            }); // terminal node: its start is the rank's exit
        }
        first.push(nodes.len() as u32);
        let mut recv_msg = vec![u32::MAX; recvs.len()];
        for (sends, rs) in chan.values() {
            if sends.len() != rs.len() {
                return None;
            }
            for (&m, &v) in sends.iter().zip(rs) {
                msgs[m as usize].recv_node = recvs[v as usize].0;
                recv_msg[v as usize] = m;
            }
        }
        let order = topological(&nodes, &first, &msgs, &recvs, &recv_msg)?;
        let mut plan = Plan {
            p: p as u32,
            alpha: costs.alpha_ns,
            gamma: costs.gamma_ns_per_byte,
            nodes,
            order,
            first,
            msgs,
            recv_msg,
            program: Vec::new(),
            terms: Vec::new(),
        };
        plan.compile();
        plan.all_dependent().then_some(plan)
    }

    /// Flattens the nodes in `order` into `program` and `terms`.
    fn compile(&mut self) {
        for &n in &self.order {
            let node = self.nodes[n as usize];
            if node.terminal {
                continue;
            }
            let lo = self.terms.len() as u32;
            for v in node.recv_lo..node.recv_hi {
                let m = self.msgs[self.recv_msg[v as usize] as usize];
                self.terms.push(Term {
                    partner: m.send_node,
                    rndv: m.rndv,
                    n_beta: m.n_beta,
                    o: m.o,
                });
            }
            let mid = self.terms.len() as u32;
            for m in &self.msgs[node.send_lo as usize..node.send_hi as usize] {
                self.terms.push(Term {
                    partner: m.recv_node,
                    rndv: m.rndv,
                    n_beta: m.n_beta,
                    o: m.o,
                });
            }
            self.program.push(Compiled {
                node: n,
                lo,
                mid,
                hi: self.terms.len() as u32,
                reduce_ns: node.reduce_bytes as f64 * self.gamma,
            });
        }
    }

    /// Messages one instance exchanges.
    pub fn messages(&self) -> u64 {
        self.msgs.len() as u64
    }

    /// Exit times of all members from their entry times (`start` is a reused buffer).
    /// Every expression is the event-driven path's (p2p.rs, coll.rs), in the same order.
    pub fn evaluate(&self, entry: &[Time], start: &mut Vec<Time>, exits: &mut Vec<Time>) {
        start.clear();
        start.resize(self.nodes.len(), f64::NAN);
        for r in 0..self.p as usize {
            start[self.first[r] as usize] = entry[r];
        }
        let alpha = self.alpha;
        let terms = self.terms.as_slice();
        for c in &self.program {
            let n = c.node as usize;
            let t = start[n];
            let mut latest = t;
            let (lo, mid, hi) = (c.lo as usize, c.mid as usize, c.hi as usize);
            if mid == lo + 1 && hi == mid + 1 {
                // One receive and one send: most steps of most algorithms.
                let (v, s) = (&terms[lo], &terms[mid]);
                latest = later(latest, v.recv_done(t, start[v.partner as usize], alpha));
                latest = later(latest, s.send_done(t, start[s.partner as usize], alpha));
            } else {
                for v in &terms[lo..mid] {
                    latest = later(latest, v.recv_done(t, start[v.partner as usize], alpha));
                }
                for s in &terms[mid..hi] {
                    latest = later(latest, s.send_done(t, start[s.partner as usize], alpha));
                }
            }
            start[n + 1] = latest + c.reduce_ns;
        }
        exits.clear();
        exits.extend((0..self.p as usize).map(|r| start[self.first[r + 1] as usize - 1]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collectives::{schedule, AlgoParams, CollKind, CollSpec};

    const COSTS: Costs = Costs {
        alpha_ns: 1000.0,
        beta_ns_per_byte: 1.0,
        overhead_ns: 0.0,
        overhead_ns_per_byte: 0.0,
        gamma_ns_per_byte: 0.5,
        eager_threshold: 8192,
    };

    fn scheds(
        kind: CollKind,
        p: u32,
        bytes: u64,
        algo: crate::collectives::Algo,
    ) -> Vec<Rc<[Step]>> {
        let spec = CollSpec::new(kind, p, 0, bytes);
        let params = AlgoParams {
            segsize: 0,
            fanout: 4,
        };
        (0..p)
            .map(|me| schedule(&spec, algo, &params, me).unwrap().into())
            .collect()
    }

    #[test]
    fn recursive_doubling_allreduce_matches_the_closed_form() {
        use crate::collectives::Algo;
        let s = scheds(CollKind::Allreduce, 8, 8, Algo::RecursiveDoubling);
        let plan = Plan::build(&s, &COSTS).expect("plan");
        let (mut start, mut exits) = (Vec::new(), Vec::new());
        plan.evaluate(&[0.0; 8], &mut start, &mut exits);
        // Thakur et al.: lg p (α + nβ + nγ) = 3 (1000 + 8 + 4).
        assert!(exits.iter().all(|&e| e == 3036.0), "{exits:?}");
        // Member 5 enters 100 ns late. Eager messages absorb it except along 5 → 4 (step 0,
        // arrives 1108) → 6 (step 1, 2120) → 2 (step 2, 3132), each + 4 ns of reduction.
        let mut entry = [0.0; 8];
        entry[5] = 100.0;
        plan.evaluate(&entry, &mut start, &mut exits);
        let mut want = [3036.0; 8];
        want[2] = 3136.0;
        assert_eq!(exits, want);
    }

    #[test]
    fn an_eager_bcast_root_does_not_wait_so_it_has_no_plan() {
        use crate::collectives::Algo;
        let s = scheds(CollKind::Bcast, 8, 8, Algo::Binomial);
        assert!(Plan::build(&s, &COSTS).is_none());
        let s = scheds(CollKind::Barrier, 8, 0, Algo::RecursiveDoubling);
        assert!(Plan::build(&s, &COSTS).is_some());
    }
}
