//! Tests of the max-min fair solver (textbook cases, and bit-identity of incremental
//! updates with a from-scratch solve over random topologies).

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
