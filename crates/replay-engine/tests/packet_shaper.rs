//! Token-bucket ports in the packet engine (fabric/packet/shaper.rs), against closed forms
//! of Linux htb's rule: a packet may start while the port's tokens are ≥ 0, leaves at the
//! peak, and is charged whole (the tokens may go negative); tokens refill at the rate up to
//! the burst.
//!
//! The fabric: one tree level of 4 endpoints, links of rate R = 0.125 B/ns (1 Gbit/s)
//! behind buckets of B = 1000 B with a peak of 1 B/ns (8 Gbit/s), no latencies, cut-through
//! (rates that are powers of two keep every time exact).
//! A route 0 → 1 crosses two shaped links (0's up link, 1's down link) with the same
//! bucket, so each packet meets the second bucket in the state the first left it in: the
//! times are those of one bucket.

mod fabric_support;

use std::collections::BTreeMap;

use fabric_support::{build, packet};
use replay_engine::fabric::schema::Value;
use replay_engine::fabric::{Fabric, Kind, Transfer};
use replay_engine::FabricSpec;

const RATE: f64 = 0.125;
const BURST: f64 = 1000.0;
const PEAK: f64 = 1.0;

fn tree(level: &[(&str, Value)]) -> BTreeMap<String, Value> {
    let mut l = vec![
        ("arity", Value::Int(4)),
        ("link_bandwidth_gbps", Value::from(RATE * 8.0)),
    ];
    l.extend(level.iter().cloned());
    BTreeMap::from([
        ("model".to_string(), Value::from("tree")),
        ("levels".to_string(), Value::List(vec![Value::table(l)])),
    ])
}

fn shaped_level() -> Vec<(&'static str, Value)> {
    vec![
        ("burst_bytes", Value::Int(BURST as i64)),
        ("peak_bandwidth_gbps", Value::from(PEAK * 8.0)),
    ]
}

/// The shaped tree under packet contention with `packet_bytes`-byte packets.
fn shaped(packet_bytes: i64) -> Box<dyn Fabric> {
    let keys = [("packet_bytes", Value::Int(packet_bytes))];
    build(&packet(tree(&shaped_level()), &keys), 0)
}

/// Submits (at, bytes) transfers 0 → 1 in order of `at` (ids 0, 1, …), running the fabric
/// between them; returns each transfer's delivery time by id.
fn deliveries(f: &mut dyn Fabric, sends: &[(f64, u64)]) -> Vec<f64> {
    let mut out = Vec::new();
    for (id, &(at, bytes)) in sends.iter().enumerate() {
        while let Some(t) = f.next_time().filter(|&t| t <= at) {
            f.advance(t, &mut out);
        }
        f.advance(at, &mut out);
        f.submit(at, &Transfer::new(id as u32, 0, 1, bytes, Kind::Eager));
    }
    while let Some(t) = f.next_time() {
        f.advance(t, &mut out);
    }
    let mut at = vec![f64::NAN; sends.len()];
    for d in &out {
        at[d.id as usize] = d.at;
    }
    at
}

#[test]
fn a_packet_after_idle_leaves_at_the_peak_whatever_its_size() {
    // 3000 B > the 1000 B burst: still one packet, so it leaves at once, at the peak.
    let mut f = shaped(4000);
    assert_eq!(deliveries(f.as_mut(), &[(0.0, 3000)]), vec![3000.0 / PEAK]);
    // Unshaped, it crosses at the rate.
    let mut plain = build(&packet(tree(&[]), &[("packet_bytes", Value::Int(4000))]), 0);
    assert_eq!(
        deliveries(plain.as_mut(), &[(0.0, 3000)]),
        vec![3000.0 / RATE]
    );
}

#[test]
fn a_packet_behind_a_debt_waits_until_it_is_repaid() {
    // The first 3000 B packet leaves 2000 B of debt: the second starts when it is repaid,
    // 2000 / R = 16 µs after the first started, and leaves at the peak.
    let mut f = shaped(4000);
    let got = deliveries(f.as_mut(), &[(0.0, 3000), (0.0, 3000)]);
    let second_start = (3000.0 - BURST) / RATE;
    assert_eq!(got, vec![3000.0 / PEAK, second_start + 3000.0 / PEAK]);
}

#[test]
fn a_stream_of_packets_settles_at_the_rate_after_its_burst() {
    // One 30000 B message in ten 3000 B packets: packet k (from 0) starts once k packets
    // are paid for beyond the burst, at (3000 k − B) / R.
    let mut f = shaped(3000);
    let last_start = (9.0 * 3000.0 - BURST) / RATE;
    assert_eq!(
        deliveries(f.as_mut(), &[(0.0, 30_000)]),
        vec![last_start + 3000.0 / PEAK]
    );
}

#[test]
fn tokens_refill_at_the_rate_and_stop_at_the_burst() {
    let mut f = shaped(4000);
    // The first packet's debt (2000 B) is repaid at 16 µs; at 20 µs the bucket holds
    // 0.125 × 4000 = 500 B, so the second leaves at once (its own debt, 2500 B, is repaid
    // at 40 µs); the third, at 30 µs, waits for that.
    let got = deliveries(
        f.as_mut(),
        &[(0.0, 3000), (20_000.0, 3000), (30_000.0, 3000)],
    );
    assert_eq!(got, vec![3000.0, 23_000.0, 43_000.0]);
    // After a long idle the bucket holds the burst, no more: of two packets the second
    // waits as it did from a full bucket.
    let mut f = shaped(4000);
    let idle = 1e6;
    let got = deliveries(f.as_mut(), &[(0.0, 3000), (idle, 3000), (idle, 3000)]);
    assert_eq!(got, vec![3000.0, idle + 3000.0, idle + 19_000.0]);
}

#[test]
fn the_long_run_rate_is_the_links_rate_not_the_peak() {
    // 1 MB in 1000 B packets: packet k ≥ 2 starts at (1000 k − B) / R (packet 1 right
    // behind packet 0, on the 125 B that refilled meanwhile), so R holds after the burst.
    let mut f = shaped(1000);
    let n = 1000.0;
    let got = deliveries(f.as_mut(), &[(0.0, 1_000_000)])[0];
    let want = ((n - 1.0) * 1000.0 - BURST) / RATE + 1000.0 / PEAK;
    assert!((got - want).abs() < 1e-9 * want, "{got} vs {want}");
}

#[test]
fn shaped_links_refuse_virtual_background_and_the_flow_overdraft() {
    let err = |level: &[(&str, Value)], keys: &[(&str, Value)]| {
        let spec = FabricSpec::parse(&packet(tree(level), keys)).expect("parses");
        spec.build(0)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let virt = err(&shaped_level(), &[("background", Value::from("virtual"))]);
    assert!(virt.contains("packet.background"), "{virt}");
    let mut level = shaped_level();
    level.push(("max_packet_bytes", Value::Int(62636)));
    let over = err(&level, &[]);
    assert!(over.contains("levels[0].max_packet_bytes"), "{over}");
}
