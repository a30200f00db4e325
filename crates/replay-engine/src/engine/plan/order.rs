//! The order a plan is evaluated in, and its causality check (see mod.rs).

use super::{Node, Plan, Request};

/// The nodes whose starts node `v`'s completion needs besides its own: the partner nodes
/// of the requests it waits for (senders of its receives, receivers of its rendezvous
/// sends; an eager send completes on its own).
fn partners<'a>(
    node: &Node,
    requests: &'a [Request],
    waited: &'a [u32],
) -> impl Iterator<Item = u32> + 'a {
    waited[node.wait_lo as usize..node.wait_hi as usize]
        .iter()
        .map(|&q| requests[q as usize])
        .filter(|q| !q.send || q.rndv)
        .map(|q| q.partner)
}

impl Plan {
    /// Whether every rank's exit depends on every rank's entry (bitset propagation in the
    /// plan's order).
    pub(super) fn all_dependent(&self) -> bool {
        let words = (self.p as usize).div_ceil(64);
        let mut start = vec![0u64; self.nodes.len() * words];
        for r in 0..self.p as usize {
            start[self.first[r] as usize * words + r / 64] |= 1 << (r % 64);
        }
        let mut acc = vec![0u64; words];
        for &n in &self.order {
            let node = self.nodes[n as usize];
            if node.terminal {
                continue;
            }
            acc.copy_from_slice(&start[n as usize * words..(n as usize + 1) * words]);
            for other in partners(&node, &self.requests, &self.waited) {
                for w in 0..words {
                    acc[w] |= start[other as usize * words + w];
                }
            }
            start[(n as usize + 1) * words..(n as usize + 2) * words].copy_from_slice(&acc);
        }
        (0..self.p as usize).all(|r| {
            let exit = (self.first[r + 1] - 1) as usize;
            let bits = &start[exit * words..(exit + 1) * words];
            (0..self.p as usize).all(|k| bits[k / 64] >> (k % 64) & 1 == 1)
        })
    }
}

/// Kahn's algorithm over "node n completes" events: n needs its own start (the previous
/// node of its rank) and the start of every partner node. The requests a node waits for
/// were posted by it or by an earlier node of its rank, so its own start covers them. None
/// if the programs cannot complete.
pub(super) fn topological(
    nodes: &[Node],
    first: &[u32],
    requests: &[Request],
    waited: &[u32],
) -> Option<Vec<u32>> {
    let n = nodes.len();
    // An edge u → v: v's completion needs u's completion (u = the node before v's partner).
    let is_first = |x: u32| first[nodes[x as usize].rank as usize] == x;
    let mut needs = vec![0u32; n];
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); n];
    for v in 0..n as u32 {
        let node = nodes[v as usize];
        let mut add = |partner: u32| {
            if !is_first(partner) {
                out[partner as usize - 1].push(v);
                needs[v as usize] += 1;
            }
        };
        add(v);
        partners(&node, requests, waited).for_each(&mut add);
    }
    let mut order: Vec<u32> = (0..n as u32).filter(|&v| needs[v as usize] == 0).collect();
    let mut i = 0;
    while i < order.len() {
        let u = order[i] as usize;
        for &v in &out[u] {
            needs[v as usize] -= 1;
            if needs[v as usize] == 0 {
                order.push(v);
            }
        }
        i += 1;
    }
    (order.len() == n).then_some(order)
}
