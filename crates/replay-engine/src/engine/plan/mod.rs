//! Closed-form collectives on stateless, contention-free fabrics (the α-β form with
//! unlimited ports).
//!
//! There a message's cost depends only on when its two sides are posted (eager: the data
//! leaves at post + o and arrives α + nβ later; rendezvous without handshake: it leaves
//! when both sides are posted), so a collective instance is a max-plus computation over its
//! members' entry times. Matching within an instance is FIFO per (sender, receiver) in
//! program order, which does not depend on time either. A `Plan` fixes, once per collective
//! shape, the message pairing and an order in which every node's inputs are ready; each
//! instance is then evaluated in one pass over flat arrays, without requests, queues or
//! events — exactly the times the event-driven path computes (same expressions).
//!
//! A node is a stretch of a rank's program that runs at one instant: the requests it posts,
//! then the wait or the reduction that ends it. The next node starts when the waited
//! requests completed (or the reduction is done).
//!
//! Causality: the engine can only evaluate when the last member enters, so a plan is used
//! only if every member's exit depends on every member's entry (`all_dependent`; true for
//! allreduce, allgather, alltoall, barrier, …; false e.g. for a bcast root sending eagerly).
//!
//! Host noise (fabric/host/noise.rs) stretches CPU work and delays a rank's return from a
//! wait, but only at the rank's own instants and in its program order, so a plan stays
//! exact with it: `evaluate_on` asks each member's detours (`MemberCpu`) where the
//! event-driven path does — every eager send's overhead from its node's start, the return
//! from a wait that ends after the node started, the reduction after it — and in the same
//! order per member (members' detours are independent, so the order across members does
//! not matter). tests/closed_form_equivalence.rs compares both paths bit for bit. Every
//! instant it asks a member about lies in [entry, exit + the largest eager-send overhead]
//! (`cpu_span`): a member without a detour there gets nominal answers, so when no member
//! has one, `evaluate` gives the same exits (closed_form.rs asks that first).

use std::rc::Rc;

use crate::collectives::{Algo, AlgoParams, CollKind, CollSpec, Instr, Program};
use crate::fabric::Time;
use fast_hash::FastMap;

mod order;
use order::topological;

/// The shape of one collective instance, which fixes its programs and plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShapeKey {
    pub kind: CollKind,
    pub p: u32,
    pub root: u32,
    pub bytes: u64,
    pub elem_bytes: u32,
    pub commutative: bool,
    pub algo: Algo,
    pub params: AlgoParams,
}

impl ShapeKey {
    /// The shape of a call without per-peer counts.
    pub fn of(spec: &CollSpec, algo: Algo, params: AlgoParams) -> Self {
        Self {
            kind: spec.kind,
            p: spec.comm_size,
            root: spec.root,
            bytes: spec.bytes,
            elem_bytes: spec.elem_bytes,
            commutative: spec.commutative,
            algo,
            params,
        }
    }
}

/// A node of the plan (see the module comment).
#[derive(Debug, Clone, Copy)]
pub(super) struct Node {
    rank: u32,
    /// The requests whose completion it waits for: `waited[wait_lo..wait_hi]`.
    wait_lo: u32,
    wait_hi: u32,
    /// The requests it posts: `requests[posts_lo..posts_hi]`.
    posts_lo: u32,
    posts_hi: u32,
    reduce_bytes: u64,
    /// The rank's last node: its start is the exit.
    terminal: bool,
}

/// One request of one rank.
#[derive(Debug, Clone, Copy)]
pub(super) struct Request {
    /// Node that posts it, and the node that posts its partner (the matching send or
    /// receive).
    node: u32,
    partner: u32,
    /// The partner request.
    mate: u32,
    send: bool,
    rndv: bool,
    /// n·β and the host overhead o + n·O of its message.
    n_beta: f64,
    o: f64,
}

#[derive(Debug)]
pub struct Plan {
    p: u32,
    alpha: f64,
    gamma: f64,
    nodes: Vec<Node>,
    requests: Vec<Request>,
    /// Waited request ids, in node order.
    waited: Vec<u32>,
    /// Node ids in an order where each node's inputs are known. Node `first[r] + j` is
    /// node j of rank r; node `first[r + 1] - 1` is its terminal node (its start is the
    /// exit).
    order: Vec<u32>,
    first: Vec<u32>,
    sends: u64,
    /// The largest overhead of an eager send (0 if none): CPU work that may end after the
    /// exit of the member posting it.
    eager_o_max: f64,
    /// `order` compiled for `evaluate`: the non-terminal nodes with their terms inline.
    program: Vec<Compiled>,
    terms: Vec<Term>,
}

/// One non-terminal node of the evaluation program: its terms — `terms[lo..mid]` the
/// eager receives it posts itself, `terms[mid..hi]` the others —, the largest host overhead
/// of the eager sends it posts and waits for itself (0 if none), and its reduction time
/// (bytes · γ, the product the event path computes).
///
/// Such a send completes at start + o, and start + max(o) is the latest of those exactly
/// (rounding is monotonic), so they need no terms: in most steps the wait is one receive
/// and one eager send, and only the receive is left, in the loop that needs no dispatch.
/// (The latest of the completions does not depend on their order: max is exact.)
#[derive(Debug, Clone, Copy)]
struct Compiled {
    node: u32,
    lo: u32,
    mid: u32,
    hi: u32,
    own_eager_o: f64,
    reduce_ns: f64,
}

/// A waited request as `evaluate` reads it: the start slots of the node that posted it
/// and of the node that posted its partner, and the costs.
#[derive(Debug, Clone, Copy)]
struct Term {
    own: u32,
    partner: u32,
    send: bool,
    rndv: bool,
    n_beta: f64,
    o: f64,
}

impl Term {
    /// When the request completes, posted at `t`, its partner posted at `other`.
    #[inline(always)]
    fn done(&self, t: Time, other: Time, alpha: f64) -> Time {
        match (self.send, self.rndv) {
            (true, true) => later(t, other) + alpha + self.n_beta,
            (true, false) => t + self.o,
            (false, true) => later(other, t) + alpha + self.n_beta + self.o,
            (false, false) => later(t, other + self.o + alpha + self.n_beta) + self.o,
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

/// The members' CPU under host noise, as the event-driven path asks it (engine/host_cpu.rs).
pub trait MemberCpu {
    /// When `work` ns of CPU work member `m` begins at `t` end.
    fn work(&mut self, m: u32, t: Time, work: Time) -> Time;
    /// When member `m`, whose wait ended at `t`, runs again.
    fn back(&mut self, m: u32, t: Time) -> Time;
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

/// What `split` fills while the programs are read.
#[derive(Default)]
struct Parts {
    nodes: Vec<Node>,
    requests: Vec<Request>,
    waited: Vec<u32>,
    /// Per (src, dst): its sends and receives in program order (FIFO pairing).
    chan: FastMap<(u32, u32), (Vec<u32>, Vec<u32>)>,
}

impl Parts {
    /// An empty node of rank `r` at the end of the waited list.
    fn node(&self, r: u32, terminal: bool) -> Node {
        let at = self.waited.len() as u32;
        let posts = self.requests.len() as u32;
        Node {
            rank: r,
            wait_lo: at,
            wait_hi: at,
            posts_lo: posts,
            posts_hi: posts,
            reduce_bytes: 0,
            terminal,
        }
    }

    /// Splits rank `r`'s program into nodes; false on a waitany window or a bad peer (no
    /// closed form).
    fn split(&mut self, r: u32, prog: &Program, costs: &Costs, p: u32) -> bool {
        let base = self.requests.len() as u32;
        let first = self.nodes.len();
        let mut cur = self.node(r, false);
        // `cur` posted a request (a node that posts nothing and only reduces can fold into
        // the node before it, see `Instr::Reduce`).
        let mut posted = false;
        for &ins in &prog.instrs {
            let node = self.nodes.len() as u32;
            if matches!(ins, Instr::Send { .. } | Instr::Recv { .. }) {
                posted = true;
            }
            match ins {
                Instr::Send { peer, .. } | Instr::Recv { peer, .. } if peer >= p || peer == r => {
                    return false;
                }
                Instr::Send { peer, bytes, sync } => {
                    let id = self.requests.len() as u32;
                    self.chan.entry((r, peer)).or_default().0.push(id);
                    self.requests.push(Request {
                        node,
                        partner: u32::MAX,
                        mate: u32::MAX,
                        send: true,
                        rndv: sync || bytes > costs.eager_threshold,
                        // The engine's expressions, so both paths give bit-identical times.
                        n_beta: bytes as f64 * costs.beta_ns_per_byte,
                        o: costs.overhead_ns + bytes as f64 * costs.overhead_ns_per_byte,
                    });
                }
                Instr::Recv { peer, .. } => {
                    let id = self.requests.len() as u32;
                    self.chan.entry((peer, r)).or_default().1.push(id);
                    self.requests.push(Request {
                        node,
                        partner: u32::MAX,
                        mate: u32::MAX,
                        send: false,
                        rndv: false,
                        n_beta: 0.0,
                        o: 0.0,
                    });
                }
                Instr::Wait { lo, hi } => {
                    self.waited
                        .extend(prog.waited(lo, hi).iter().map(|q| base + q));
                    cur.wait_hi = self.waited.len() as u32;
                    cur.posts_hi = self.requests.len() as u32;
                    self.nodes.push(cur);
                    cur = self.node(r, false);
                    posted = false;
                }
                Instr::Reduce { bytes } => {
                    // A reduction right after a wait (most steps: sendrecv, then reduce)
                    // joins the wait's node: its start + 0 + γn equals the next node's
                    // start + γn, and half the nodes are evaluated.
                    let foldable = !posted && self.nodes.len() > first;
                    match self.nodes.last_mut() {
                        Some(prev) if foldable && prev.reduce_bytes == 0 => {
                            prev.reduce_bytes = bytes;
                        }
                        _ => {
                            cur.reduce_bytes = bytes;
                            cur.posts_hi = self.requests.len() as u32;
                            self.nodes.push(cur);
                            cur = self.node(r, false);
                            posted = false;
                        }
                    }
                }
                Instr::Window { .. } => return false,
            }
        }
        // the terminal node (its start is the exit), with what the program posts after its
        // last wait, if anything
        cur.terminal = true;
        cur.posts_hi = self.requests.len() as u32;
        self.nodes.push(cur);
        true
    }
}

impl Plan {
    /// The plan of a collective whose members run `progs` (indexed by communicator rank);
    /// None if the programs do not pair up, cannot complete, use a waitany window, or some
    /// exit would not depend on every entry.
    pub fn build(progs: &[Rc<Program>], costs: &Costs) -> Option<Plan> {
        let p = progs.len();
        let mut parts = Parts::default();
        let mut first = Vec::with_capacity(p + 1);
        for (r, prog) in progs.iter().enumerate() {
            first.push(parts.nodes.len() as u32);
            if !parts.split(r as u32, prog, costs, p as u32) {
                return None;
            }
        }
        first.push(parts.nodes.len() as u32);
        let Parts {
            nodes,
            mut requests,
            waited,
            chan,
        } = parts;
        // FIFO pairing per (src, dst): k-th send ↔ k-th receive.
        for (sends, recvs) in chan.values() {
            if sends.len() != recvs.len() {
                return None;
            }
            for (&s, &v) in sends.iter().zip(recvs) {
                let (sn, vn) = (requests[s as usize].node, requests[v as usize].node);
                requests[s as usize].partner = vn;
                requests[s as usize].mate = v;
                let send = requests[s as usize];
                let recv = &mut requests[v as usize];
                recv.partner = sn;
                recv.mate = s;
                recv.rndv = send.rndv;
                recv.n_beta = send.n_beta;
                recv.o = send.o;
            }
        }
        let sends = requests.iter().filter(|q| q.send).count() as u64;
        let eager_o_max = requests
            .iter()
            .filter(|q| q.send && !q.rndv)
            .fold(0.0, |m: f64, q| m.max(q.o));
        let order = topological(&nodes, &first, &requests, &waited)?;
        let mut plan = Plan {
            p: p as u32,
            alpha: costs.alpha_ns,
            gamma: costs.gamma_ns_per_byte,
            nodes,
            requests,
            waited,
            order,
            first,
            sends,
            eager_o_max,
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
            let waited = &self.waited[node.wait_lo as usize..node.wait_hi as usize];
            let waited = waited.iter().map(|&q| self.requests[q as usize]);
            let own_eager = |q: &Request| !q.rndv && q.node == n;
            let own_eager_o = waited
                .clone()
                .filter(|q| q.send && own_eager(q))
                .fold(0.0, |o, q| later(o, q.o));
            let term = |q: Request| Term {
                own: q.node,
                partner: q.partner,
                send: q.send,
                rndv: q.rndv,
                n_beta: q.n_beta,
                o: q.o,
            };
            let lo = self.terms.len() as u32;
            let receives = waited.clone().filter(|q| !q.send && own_eager(q));
            self.terms.extend(receives.map(term));
            let mid = self.terms.len() as u32;
            let others = waited.filter(|q| !own_eager(q));
            self.terms.extend(others.map(term));
            self.program.push(Compiled {
                node: n,
                lo,
                mid,
                hi: self.terms.len() as u32,
                own_eager_o,
                reduce_ns: node.reduce_bytes as f64 * self.gamma,
            });
        }
    }

    /// Messages one instance exchanges.
    pub fn messages(&self) -> u64 {
        self.sends
    }

    /// The span a member entering at `entry` and leaving at `exit` has its CPU asked about
    /// (module comment).
    pub fn cpu_span(&self, entry: Time, exit: Time) -> (Time, Time) {
        (entry, exit + self.eager_o_max)
    }

    /// Exit times of all members from their entry times (`start` is a reused buffer).
    /// Every expression is the event-driven path's (p2p.rs, collective.rs), in the same
    /// order.
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
            // = later(t, t + o) for o >= 0, as the event path's wait computes it
            let mut latest = t + c.own_eager_o;
            for q in &terms[c.lo as usize..c.mid as usize] {
                // `Term::done` of an eager receive posted at t
                let arrived = start[q.partner as usize] + q.o + alpha + q.n_beta;
                latest = later(latest, later(t, arrived) + q.o);
            }
            for q in &terms[c.mid as usize..c.hi as usize] {
                let (t, other) = (start[q.own as usize], start[q.partner as usize]);
                latest = later(latest, q.done(t, other, alpha));
            }
            start[n + 1] = latest + c.reduce_ns;
        }
        exits.clear();
        exits.extend((0..self.p as usize).map(|r| start[self.first[r + 1] as usize - 1]));
    }

    /// `evaluate` on members whose CPU has host detours (`cpu`; see the module comment):
    /// node by node in `order`, without the compiled shortcuts, which assume that CPU work
    /// takes its nominal time. `sent` is a reused buffer (per request, when an eager send's
    /// overhead is done).
    pub fn evaluate_on(
        &self,
        entry: &[Time],
        cpu: &mut impl MemberCpu,
        start: &mut Vec<Time>,
        sent: &mut Vec<Time>,
        exits: &mut Vec<Time>,
    ) {
        start.clear();
        start.resize(self.nodes.len(), f64::NAN);
        sent.clear();
        sent.resize(self.requests.len(), f64::NAN);
        for (&n, &at) in self.first.iter().zip(entry) {
            start[n as usize] = at;
            self.post(n as usize, cpu, start, sent);
        }
        let alpha = self.alpha;
        for &n in &self.order {
            let n = n as usize;
            let node = self.nodes[n];
            if node.terminal {
                continue;
            }
            let t = start[n];
            let mut latest = t;
            for &id in &self.waited[node.wait_lo as usize..node.wait_hi as usize] {
                let q = &self.requests[id as usize];
                let (own, other) = (start[q.node as usize], start[q.partner as usize]);
                let done = match (q.send, q.rndv) {
                    (true, false) => sent[id as usize],
                    (true, true) => later(own, other) + alpha + q.n_beta,
                    (false, true) => later(other, own) + alpha + q.n_beta + q.o,
                    (false, false) => later(own, sent[q.mate as usize] + alpha + q.n_beta) + q.o,
                };
                latest = later(latest, done);
            }
            // A wait that ends when it began returns at once (collective.rs).
            let back = if latest > t {
                cpu.back(node.rank, latest)
            } else {
                t
            };
            start[n + 1] = if node.reduce_bytes > 0 {
                cpu.work(node.rank, back, node.reduce_bytes as f64 * self.gamma)
            } else {
                back
            };
            self.post(n + 1, cpu, start, sent);
        }
        exits.clear();
        exits.extend((0..self.p as usize).map(|r| start[self.first[r + 1] as usize - 1]));
    }

    /// Node `n`, started, posts its requests: each eager send's overhead runs from its start.
    fn post(&self, n: usize, cpu: &mut impl MemberCpu, start: &[Time], sent: &mut [Time]) {
        let node = self.nodes[n];
        for q in node.posts_lo..node.posts_hi {
            let req = &self.requests[q as usize];
            if req.send && !req.rndv {
                sent[q as usize] = cpu.work(node.rank, start[n], req.o);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collectives::{schedule, AlgoParams, CollKind, CollSpec, Selector};

    const COSTS: Costs = Costs {
        alpha_ns: 1000.0,
        beta_ns_per_byte: 1.0,
        overhead_ns: 0.0,
        overhead_ns_per_byte: 0.0,
        gamma_ns_per_byte: 0.5,
        eager_threshold: 8192,
    };

    fn progs(kind: CollKind, p: u32, bytes: u64, algo: Algo) -> Vec<Rc<Program>> {
        let spec = CollSpec::new(kind, p, 0, bytes);
        let sel = Selector::fixed();
        (0..p)
            .map(|me| Rc::new(schedule(&spec, algo, &AlgoParams::FORCED, me, &sel).unwrap()))
            .collect()
    }

    #[test]
    fn recursive_doubling_allreduce_matches_the_closed_form() {
        let s = progs(CollKind::Allreduce, 8, 8, Algo::RecursiveDoubling);
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
        let s = progs(CollKind::Bcast, 8, 8, Algo::Binomial);
        assert!(Plan::build(&s, &COSTS).is_none());
        let s = progs(CollKind::Barrier, 8, 0, Algo::RecursiveDoubling);
        assert!(Plan::build(&s, &COSTS).is_some());
    }
}
