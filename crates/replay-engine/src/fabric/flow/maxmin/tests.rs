//! Tests of the max-min fair solver: textbook cases, and local re-solving against a
//! from-scratch solve and against the max-min characterisation (Bertsekas & Gallager,
//! "Data Networks", §6.5.2) over random topologies and arrival/departure sequences.

use super::scratch::SCAN_LINKS;
use super::*;
use crate::prng::SplitMix64;

/// Tolerance of the comparisons (relative); the solver itself verifies within 1e-11.
const TOL: f64 = 1e-9;

impl MaxMin {
    pub(super) fn live_slots(&self) -> Vec<FlowSlot> {
        (0..self.flows.len() as FlowSlot)
            .filter(|&f| self.flows[f as usize].live)
            .collect()
    }

    /// Reference solver: progressive filling over every live flow from scratch, fixing at
    /// each step the link of least (current share, id) with all its unfixed flows.
    pub(super) fn reference_rates(&self) -> Vec<(FlowSlot, f64)> {
        let mut rem: Vec<f64> = self.links.iter().map(|k| k.capacity).collect();
        let mut unfixed: Vec<u32> = self.links.iter().map(|k| k.len).collect();
        let mut rate = vec![f64::NAN; self.flows.len()];
        loop {
            let best = (0..rem.len())
                .filter(|&l| unfixed[l] > 0)
                .map(|l| (rem[l].max(0.0) / f64::from(unfixed[l]), l))
                .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let Some((share, l)) = best else { break };
            for f in self.links[l].flows(l as u32, &self.spill) {
                if !rate[f as usize].is_nan() {
                    continue;
                }
                rate[f as usize] = share;
                for &m in self.flows[f as usize].links() {
                    rem[m as usize] -= share;
                    unfixed[m as usize] -= 1;
                }
            }
        }
        self.live_slots()
            .into_iter()
            .map(|f| (f, rate[f as usize]))
            .collect()
    }

    /// Asserts the characterisation directly: every link's load is within its capacity
    /// (up to `TOL`), and every flow has a bottleneck — a saturated link of its route on
    /// which no flow is faster (up to `TOL`). The bottleneck each flow remembers (the
    /// invariant the local re-solve relies on) must be one.
    pub(super) fn assert_max_min_fair(&self, what: &str) {
        let load_max = |l: usize| {
            let rates = self.links[l]
                .flows(l as u32, &self.spill)
                .map(|h| self.rate(h));
            rates.fold((0.0, 0.0f64), |(s, m), r| (s + r, m.max(r)))
        };
        for l in 0..self.links.len() {
            let c = self.links[l].capacity;
            assert!(
                load_max(l).0 <= c * (1.0 + TOL),
                "{what}: link {l} overloaded"
            );
        }
        for f in self.live_slots() {
            let r = self.rate(f);
            let has = self.flows[f as usize].links().iter().any(|&l| {
                let (load, max) = load_max(l as usize);
                load >= self.links[l as usize].capacity * (1.0 - TOL) && r >= max * (1.0 - TOL)
            });
            assert!(has, "{what}: flow {f} (rate {r}) has no bottleneck");
            let b = self.flows[f as usize].bottleneck as usize;
            let (load, max) = load_max(b);
            assert!(
                load >= self.links[b].capacity * (1.0 - TOL) && r >= max * (1.0 - TOL),
                "{what}: flow {f} (rate {r}) remembers link {b}, not a bottleneck"
            );
        }
    }

    pub(super) fn assert_matches_reference(&self, what: &str) {
        for (f, want) in self.reference_rates() {
            let got = self.rate(f);
            assert!(
                (got - want).abs() <= TOL * want.abs(),
                "{what}: flow {f} rate {got} != reference {want}"
            );
        }
    }
}

/// Drives a solver over random topologies (capacities, routes of 1-4 distinct links) and
/// random arrivals and departures; `visit` sees it after every settle, with the number of
/// filling rounds that settle took (0: nothing to settle).
fn drive(seed: u64, scan_links: usize, mut visit: impl FnMut(&MaxMin, u64, &str)) {
    let mut rng = SplitMix64::new(seed);
    let links = 1 + rng.below(24) as usize;
    let caps: Vec<f64> = (0..links)
        .map(|_| [1.0, 2.5, 12.5, 0.3][rng.below(4) as usize] * (1 + rng.below(3)) as f64)
        .collect();
    let mut m = MaxMin::new(caps);
    m.scratch.scan_links = scan_links;
    let mut now = 0.0;
    let mut done = Vec::new();
    for step in 0..80 {
        for _ in 0..rng.below(6) {
            // One route in eight crosses every link: up to 24, past a flow's inline
            // route storage, so reused slots switch between inline and spilled routes.
            let hops = if rng.below(8) == 0 {
                links
            } else {
                1 + rng.below(4.min(links as u64)) as usize
            };
            let mut route: Vec<u32> = (0..links as u32).collect();
            rng.shuffle(&mut route);
            route.truncate(hops);
            let bytes = [100.0, 1000.0, 4096.0, 3.0][rng.below(4) as usize];
            m.add(now, &route, bytes, step);
        }
        let rounds = m.stats.rounds;
        m.settle(now);
        visit(
            &m,
            m.stats.rounds - rounds,
            &format!("seed {seed} step {step}"),
        );
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

/// After every settle the rates satisfy the characterisation and equal a from-scratch
/// solve; S had to expand in a good share of the settles, several times in some.
#[test]
fn local_resolves_are_max_min_fair_and_match_a_full_resolve() {
    let (mut settles, mut expanding, mut multi) = (0u64, 0u64, 0u64);
    for seed in 0..400u64 {
        drive(seed, SCAN_LINKS, |m, rounds, what| {
            m.assert_max_min_fair(what);
            m.assert_matches_reference(what);
            settles += u64::from(rounds > 0);
            expanding += u64::from(rounds > 1);
            multi += u64::from(rounds > 2);
        });
    }
    assert!(
        expanding * 10 > settles,
        "S expanded in {expanding} of {settles} settles"
    );
    assert!(
        multi * 100 > settles,
        "S expanded twice in only {multi} settles"
    );
}

/// The scanning and the queue-driven selection of `fill` make the same choices: rates
/// are bit-identical whichever is used.
#[test]
fn scan_and_queue_selection_give_bit_identical_rates() {
    let rates = |m: &MaxMin| -> Vec<u64> {
        let live = m.live_slots().into_iter();
        live.map(|f| m.rate(f).to_bits()).collect()
    };
    for seed in 0..150u64 {
        let mut by_scan = Vec::new();
        drive(seed, usize::MAX, |m, _, _| by_scan.push(rates(m)));
        let mut by_queue = Vec::new();
        drive(seed, 0, |m, _, _| by_queue.push(rates(m)));
        assert_eq!(by_scan, by_queue, "seed {seed}");
    }
}

/// A departure whose effect travels down a chain: S starts next to it and has to grow
/// link by link until the whole chain is re-rated.
#[test]
fn a_departure_ripples_down_a_chain() {
    // Links 0..n; flow c_i crosses links i and i+1; link 0 also carries a short flow x.
    // Capacities rise along the chain so that each c_i is limited by c_{i-1}'s leftover.
    let n = 8u32;
    let caps: Vec<f64> = (0..=n).map(|i| 1.0 + f64::from(i)).collect();
    let mut m = MaxMin::new(caps);
    m.add(0.0, &[0], 1.0, 99);
    for i in 0..n {
        m.add(0.0, &[i, i + 1], 1e9, i);
    }
    m.settle(0.0);
    m.assert_matches_reference("before");
    let before = m.stats;
    let mut out = Vec::new();
    let t = m.next_finish().expect("x drains first");
    m.pop_finished(t, &mut out);
    assert_eq!(out, vec![(99, t)]);
    m.settle(t);
    m.assert_matches_reference("after");
    m.assert_max_min_fair("after");
    assert!(m.stats.rounds - before.rounds > 2, "{:?}", m.stats);
}

/// A short flow that comes and goes on a link where a long flow is not bottlenecked (a
/// halo message beside a background message limited elsewhere) re-rates only itself: the
/// long flow keeps its rate and finish-queue entry.
#[test]
fn a_short_flow_leaves_a_long_flow_bottlenecked_elsewhere_alone() {
    // Link 0 (capacity 1) limits the long flow; link 1 (10) is shared; link 2 (2) limits
    // the short one.
    let mut m = MaxMin::new(vec![1.0, 10.0, 2.0]);
    let long = m.add(0.0, &[0, 1], 1e9, 0);
    m.settle(0.0);
    let before = m.stats.rerated;
    m.add(0.0, &[1, 2], 4096.0, 1);
    m.settle(0.0);
    assert_eq!(m.stats.rerated - before, 1, "{:?}", m.stats);
    m.assert_matches_reference("arrival");
    let t = m.next_finish().expect("the short flow drains first");
    let mut out = Vec::new();
    m.pop_finished(t, &mut out);
    assert_eq!(out, vec![(1, t)]);
    m.settle(t);
    assert_eq!(m.stats.rerated - before, 1, "{:?}", m.stats);
    assert_eq!(m.rate(long), 1.0);
    m.assert_max_min_fair("departure");
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
    // One departure re-rates only its neighbours, and the ring stays max-min fair.
    let before = m.stats;
    let mut out = Vec::new();
    m.pop_finished(f64::INFINITY, &mut out);
    assert_eq!(out.len(), 2 * n as usize);
    for r in 0..n {
        m.add(1.0, &[r, n + (r + 1) % n], 4096.0, r);
        m.add(
            1.0,
            &[r, n + (r + n - 1) % n],
            4096.0 * (1.0 + f64::from(r % 2)),
            n + r,
        );
    }
    m.settle(1.0);
    let t = m.next_finish().expect("flows");
    m.pop_finished(t, &mut out);
    let rerated = m.stats.rerated;
    m.settle(t);
    m.assert_matches_reference("ring");
    m.assert_max_min_fair("ring");
    assert!(
        m.stats.rerated - rerated < u64::from(n),
        "{:?} vs {before:?}",
        m.stats
    );
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
    let before = m.stats.rerated;
    m.add(0.0, &[1], 10.0, 1);
    m.settle(0.0);
    assert_eq!(
        m.stats.rerated - before,
        1,
        "only the new flow's component is re-rated"
    );
}

/// `Link` is one cache line (the reason it exists).
#[test]
fn a_link_fills_one_cache_line() {
    assert_eq!(std::mem::size_of::<Link>(), 64);
}

/// A link's flow list (`head` then `spill`) keeps the order a `Vec` with `swap_remove`
/// would: the order of the re-solve's float sums, hence bit-identical rates, depends on it.
#[test]
fn a_link_lists_its_flows_like_a_swap_removed_vec() {
    let mut rng = SplitMix64::new(7);
    let mut m = MaxMin::new(vec![1.0, 1.0]);
    let mut model: Vec<FlowSlot> = Vec::new();
    for step in 0..400u32 {
        if model.is_empty() || (model.len() < 12 && rng.below(2) == 0) {
            model.push(m.add(0.0, &[0, 1], 1.0, step));
        } else {
            let slot = model[rng.below(model.len() as u64) as usize];
            let i = model.iter().position(|&s| s == slot).unwrap();
            model.swap_remove(i);
            m.remove(slot, 0.0);
        }
        for l in 0..2u32 {
            let list: Vec<FlowSlot> = m.links[l as usize].flows(l, &m.spill).collect();
            assert_eq!(list, model, "step {step} link {l}");
        }
    }
}
