//! Tests of token-bucket links (bucket.rs): closed forms for one and two messages, refill,
//! max-min sharing of a bucketed link, the packet in flight's overdraft and its debt, and
//! random arrivals checked against the max-min characterisation, the bucket's conformance
//! bound (bytes over [0, t] <= depth + packet + rate·t) and a bucketed link never held at
//! its rate while it has tokens.

use super::*;
use crate::prng::SplitMix64;

/// Link 0: rate 1 B/ns, peak 4 B/ns, 300 B deep. At the peak it drains at 3 B/ns: empty
/// after 100 ns, having passed 400 B.
fn bucketed(extra_links: &[f64]) -> MaxMin {
    with_packet(extra_links, 0.0)
}

/// `bucketed` whose shaper charges packets of up to `packet` bytes at once.
fn with_packet(extra_links: &[f64], packet: f64) -> MaxMin {
    let mut caps = vec![1.0];
    caps.extend_from_slice(extra_links);
    let mut m = MaxMin::new(caps);
    m.set_bucket(
        0,
        TokenBucket {
            depth_bytes: 300.0,
            packet_bytes: packet,
            peak: 4.0,
        },
    );
    m
}

#[test]
fn a_message_smaller_than_a_packet_passes_whole_at_the_peak() {
    // htb: its one packet starts while the tokens are >= 0, is charged whole (T = 300 -
    // 600) and leaves at device speed, 150 ns during which 150 B of tokens accrue
    let mut m = with_packet(&[], 1000.0);
    m.add(0.0, &[0], 600.0, 0);
    let mut now = 0.0;
    near(run(&mut m, &mut now)[0].1, 150.0);
    m.account_bucket(0, now);
    near(m.tokens(0).unwrap(), -150.0);
}

#[test]
fn concurrent_messages_overdraw_by_the_most_one_has_left() {
    // 3 x 600 B at once share the peak: 400 B by t = 100 (T = 0), each has 466.7 B left;
    // the overdraft keeps the peak until T = -466.7 (155.6 ns more), then 1 B/ns
    let mut m = with_packet(&[], 1000.0);
    for tag in 0..3 {
        m.add(0.0, &[0], 600.0, tag);
    }
    let mut now = 0.0;
    let out = run(&mut m, &mut now);
    let q = 600.0 - 400.0 / 3.0;
    let at_peak = 4.0 * (300.0 + q) / 3.0;
    let end = (300.0 + q) / 3.0 + (1800.0 - at_peak);
    assert_eq!(out.len(), 3);
    for o in &out {
        near(o.1, end);
    }
    // The debt is repaid at the rate while idle: at rate until T is back at 0, peak after.
    m.add(end + 200.0, &[0], 100.0, 9); // T = -q + 200 < 0
    let mut now = end + 200.0;
    near(run(&mut m, &mut now)[0].1, end + 300.0);
    m.add(end + 1000.0, &[0], 100.0, 10); // repaid: T > 0
    let mut now = end + 1000.0;
    near(run(&mut m, &mut now)[0].1, end + 1025.0);
}

#[test]
fn a_longer_message_overdraws_one_packet() {
    // 5000 B, packets of 1000: peak until T = -1000 (1733.3 B by t = 433.3), then 1 B/ns
    let mut m = with_packet(&[], 1000.0);
    m.add(0.0, &[0], 5000.0, 0);
    let at_peak = 4.0 * 1300.0 / 3.0;
    near(run(&mut m, &mut 0.0)[0].1, 1300.0 / 3.0 + 5000.0 - at_peak);
}

/// Runs the solver as a flow network does until nothing is left; (tag, drain time).
fn run(m: &mut MaxMin, now: &mut f64) -> Vec<(u32, f64)> {
    let mut out = Vec::new();
    loop {
        m.settle(*now);
        let Some(t) = m.next_event() else { break };
        *now = t;
        m.pop_finished(t, &mut out);
        m.empty_buckets(t);
    }
    out
}

fn near(got: f64, want: f64) {
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
        "{got} != {want}"
    );
}

#[test]
fn a_message_within_the_burst_passes_at_the_peak() {
    for (bytes, want) in [(200.0, 50.0), (400.0, 100.0)] {
        let mut m = bucketed(&[]);
        m.add(0.0, &[0], bytes, 0);
        let out = run(&mut m, &mut 0.0);
        near(out[0].1, want);
    }
}

#[test]
fn a_longer_message_passes_the_burst_at_the_peak_then_the_rest_at_the_rate() {
    let mut m = bucketed(&[]);
    m.add(0.0, &[0], 1000.0, 0);
    let out = run(&mut m, &mut 0.0);
    // 400 B by t = 100 at the peak, 600 B at 1 B/ns.
    near(out[0].1, 700.0);
    assert_eq!(m.tokens(0), Some(0.0));
}

#[test]
fn a_message_right_behind_another_finds_the_bucket_empty() {
    let mut m = bucketed(&[]);
    m.add(0.0, &[0], 400.0, 0);
    let mut now = 0.0;
    let first = run(&mut m, &mut now);
    near(first[0].1, 100.0);
    m.add(now, &[0], 300.0, 1);
    let second = run(&mut m, &mut now);
    near(second[0].1, 100.0 + 300.0);
}

#[test]
fn an_idle_bucket_refills_at_the_rate() {
    let mut m = bucketed(&[]);
    m.add(0.0, &[0], 400.0, 0);
    run(&mut m, &mut 0.0);
    // Idle from 100 to 250: 150 B of tokens. A 500 B message drains them at 3 B/ns in
    // 50 ns (200 B at the peak), then sends 300 B at the rate.
    m.add(250.0, &[0], 500.0, 1);
    m.settle(250.0);
    near(m.tokens(0).unwrap(), 150.0);
    let out = run(&mut m, &mut 250.0);
    near(out[0].1, 250.0 + 50.0 + 300.0);
    // A long idle period fills it only to its depth.
    m.add(1e6, &[0], 1.0, 2);
    m.settle(1e6);
    assert_eq!(m.tokens(0), Some(300.0));
}

#[test]
fn two_flows_share_the_peak_then_the_rate() {
    let mut m = bucketed(&[]);
    m.add(0.0, &[0], 400.0, 0);
    m.add(0.0, &[0], 400.0, 1);
    // 2 B/ns each until the bucket empties at 100 (200 B each), then 0.5 B/ns each.
    let out = run(&mut m, &mut 0.0);
    assert_eq!(out.len(), 2);
    for (_, t) in out {
        near(t, 100.0 + 200.0 / 0.5);
    }
}

#[test]
fn a_flow_bottlenecked_elsewhere_still_drains_the_bucket() {
    // Link 1 (1.5 B/ns) limits the flow below the peak but above the rate: the bucket
    // drains at 0.5 B/ns and empties at 600 (900 B sent); the link then holds it at 1 B/ns.
    // Link 0 is nobody's bottleneck when it shrinks.
    let mut m = bucketed(&[1.5]);
    let f = m.add(0.0, &[0, 1], 1200.0, 0);
    m.settle(0.0);
    near(m.rate(f), 1.5);
    near(m.next_bucket_empty().unwrap(), 600.0);
    let out = run(&mut m, &mut 0.0);
    near(out[0].1, 600.0 + 300.0);
}

#[test]
fn a_late_flow_on_an_unbucketed_link_leaves_the_bucket_alone() {
    // The bucket's flow leaves link 1 to a second flow: neither changes the other.
    let mut m = bucketed(&[10.0]);
    m.add(0.0, &[0], 200.0, 0);
    m.add(0.0, &[1], 1000.0, 1);
    let out = run(&mut m, &mut 0.0);
    near(out.iter().find(|o| o.0 == 0).unwrap().1, 50.0);
    near(out.iter().find(|o| o.0 == 1).unwrap().1, 100.0);
}

/// Random topologies with buckets on some links, random arrivals, time advanced event by
/// event: after every settle the allocation is max-min fair for the capacities the links
/// offer, and no bucketed link ever carried more than depth + packet + rate·t since time 0.
#[test]
fn random_traffic_stays_max_min_fair_and_within_every_bucket() {
    let mut empties = 0u64;
    for seed in 0..200u64 {
        let mut rng = SplitMix64::new(seed);
        let links = 1 + rng.below(12) as usize;
        let caps: Vec<f64> = (0..links)
            .map(|_| [1.0, 2.5, 0.3][rng.below(3) as usize] * (1 + rng.below(3)) as f64)
            .collect();
        let mut m = MaxMin::new(caps.clone());
        m.scratch.scan_links = [0, SCAN_LINKS_FOR_TESTS][rng.below(2) as usize];
        let mut spec = vec![None; links];
        for (l, s) in spec.iter_mut().enumerate() {
            if rng.below(2) == 0 {
                let b = TokenBucket {
                    depth_bytes: [50.0, 400.0, 3000.0][rng.below(3) as usize],
                    packet_bytes: [0.0, 100.0, 5000.0][rng.below(3) as usize],
                    peak: caps[l] * [1.5, 4.0, 40.0][rng.below(3) as usize],
                };
                m.set_bucket(l as u32, b);
                *s = Some(b);
            }
        }
        let mut carried = vec![0.0; links];
        let (mut now, mut done) = (0.0, Vec::new());
        for step in 0..60u32 {
            for _ in 0..rng.below(4) {
                let mut route: Vec<u32> = (0..links as u32).collect();
                rng.shuffle(&mut route);
                route.truncate(1 + rng.below(3.min(links as u64)) as usize);
                let bytes = [100.0, 1000.0, 4096.0, 3.0][rng.below(4) as usize];
                m.add(now, &route, bytes, step);
            }
            m.settle(now);
            let what = format!("seed {seed} step {step}");
            m.assert_max_min_fair(&what);
            m.assert_matches_reference(&what);
            for (l, s) in spec.iter().enumerate() {
                // A link held at its rate while its bucket has tokens would be stuck there.
                let l = l as u32;
                m.account_bucket(l, now);
                let load: f64 = m.links[l as usize]
                    .flows(l, &m.spill)
                    .map(|f| m.rate(f))
                    .sum();
                if s.is_some()
                    && m.capacity(l) == caps[l as usize]
                    && load >= caps[l as usize] * (1.0 - 1e-9)
                {
                    let tokens = m.tokens(l).expect("bucketed");
                    assert!(
                        tokens <= 0.0,
                        "{what}: link {l} at its rate with tokens {tokens}"
                    );
                }
            }
            let Some(t) = m.next_event() else { continue };
            // To the next event, or part of the way (arrivals between events).
            let next = if rng.below(3) == 0 {
                t
            } else {
                now + (t - now) * 0.5
            };
            for f in m.live_slots() {
                for &l in m.flows[f as usize].links() {
                    carried[l as usize] += m.rate(f) * (next - now);
                }
            }
            now = next;
            empties += m.empties.peek().is_some_and(|e| e.0 <= now) as u64;
            m.pop_finished(now, &mut done);
            m.empty_buckets(now);
            for (l, s) in spec.iter().enumerate() {
                if let Some(b) = s {
                    let bound = b.depth_bytes + b.packet_bytes + caps[l] * now;
                    assert!(
                        carried[l] <= bound * (1.0 + 1e-9),
                        "{what}: link {l} carried {} > {bound}",
                        carried[l]
                    );
                }
            }
        }
    }
    assert!(empties > 100, "buckets ran empty only {empties} times");
}

/// `fill`'s two selection strategies, both exercised above.
const SCAN_LINKS_FOR_TESTS: usize = usize::MAX;
