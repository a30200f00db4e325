//! Tests of segment switching: exact timings of the three modes, Algorithm 1's walk back to
//! a buffer, and the direction of seed 002's results on its workload (§V, Figs. 4, 9).

use crate::fabric::registry::FabricSpec;
use crate::fabric::schema::Value;
use crate::fabric::{Delivery, Fabric, Kind, Transfer};
use crate::prng::SplitMix64;

fn fabric(switching: &str, topology: Value, extra: &[(&str, Value)]) -> Box<dyn Fabric> {
    let mut pairs = vec![
        ("model", Value::from("photonic_segment")),
        ("switching", Value::from(switching)),
        ("topology", topology),
    ];
    pairs.extend(extra.iter().cloned());
    FabricSpec::from_pairs(pairs)
        .unwrap()
        .build(0)
        .unwrap()
        .fabric
}

fn torus(dims: [i64; 3], every: i64) -> Value {
    Value::table([
        ("kind", Value::from("torus3d")),
        (
            "dims",
            Value::List(dims.iter().map(|&d| Value::Int(d)).collect()),
        ),
        ("buffer_every", Value::Int(every)),
    ])
}

fn fat_tree(k: i64, n: i64, levels: i64) -> Value {
    Value::table([
        ("kind", Value::from("fat_tree")),
        ("k", Value::Int(k)),
        ("n", Value::Int(n)),
        ("buffer_levels", Value::Int(levels)),
    ])
}

/// Runs until idle; deliveries in order.
fn drain(f: &mut dyn Fabric) -> Vec<Delivery> {
    let mut out = Vec::new();
    while let Some(t) = f.next_time() {
        f.advance(t, &mut out);
    }
    out
}

fn stat(f: &dyn Fabric, now: f64, key: &str) -> f64 {
    let mut s = Vec::new();
    f.stats(now, &mut s);
    s.iter().find(|x| x.0 == key).map_or(f64::NAN, |x| x.1)
}

const CYCLE: (&str, f64) = ("cycle_ns", 10.0);

#[test]
fn zero_contention_time_is_the_reservation_round_trip_plus_the_bytes() {
    // 0 → (1,1,0): injection, two torus links, ejection = 4 links; 320 Gb/s = 40 B/ns.
    let cycle = [(CYCLE.0, Value::from(CYCLE.1))];
    let mut f = fabric("circuit", torus([4, 4, 4], 1), &cycle);
    f.submit(0.0, &Transfer::new(0, 0, 5, 4096, Kind::Eager));
    let d = drain(f.as_mut());
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].at, 2.0 * 4.0 * 10.0 + 4096.0 / 40.0);
    assert_eq!(
        (d[0].info.hops, d[0].info.setup_ns, d[0].info.blocked),
        (4, 80.0, 0)
    );
    // Packetised: three 4 KB packets, each with its own circuit: in parallel on three of the
    // five channels, or one after another when a link has one channel.
    let mut f = fabric("packet", torus([4, 4, 4], 1), &cycle);
    f.submit(0.0, &Transfer::new(0, 0, 5, 3 * 4096, Kind::Eager));
    assert_eq!(drain(f.as_mut())[0].at, 80.0 + 102.4);
    let one = [cycle[0].clone(), ("channels", Value::Int(1))];
    let mut g = fabric("packet", torus([4, 4, 4], 1), &one);
    g.submit(0.0, &Transfer::new(0, 0, 5, 3 * 4096, Kind::Eager));
    let d = drain(g.as_mut());
    assert!((d[0].at - 3.0 * (80.0 + 102.4)).abs() < 1e-9, "{}", d[0].at);
    assert_eq!(d[0].info.blocked, 2);
    // Control messages: one cycle per hop on the setup plane.
    let rts = Transfer::new(1, 0, 5, 1 << 20, Kind::Rts);
    assert!(f.control_at_once());
    assert_eq!(f.submit(0.0, &rts), crate::fabric::Submitted::At(40.0));
}

#[test]
fn a_blocked_circuit_retries_when_the_channel_frees() {
    // Ring of 4, one channel per link: A 0→2 holds the link 1→2 that B 1→3 needs.
    let extra = [(CYCLE.0, Value::from(CYCLE.1)), ("channels", Value::Int(1))];
    let mut f = fabric("circuit", torus([4, 1, 1], 1), &extra);
    f.submit(0.0, &Transfer::new(0, 0, 2, 4096, Kind::Eager));
    f.submit(0.0, &Transfer::new(1, 1, 3, 4096, Kind::Eager));
    let d = drain(f.as_mut());
    assert_eq!(d[0].id, 0);
    assert_eq!(d[0].at, 182.4);
    assert_eq!((d[1].id, d[1].info.blocked), (1, 1));
    assert!((d[1].at - 2.0 * 182.4).abs() < 1e-9, "{}", d[1].at);
    assert_eq!(stat(f.as_ref(), 400.0, "channels_held"), 0.0);
}

#[test]
fn segment_switching_walks_back_to_the_nearest_buffer_and_waits_there() {
    let extra = [(CYCLE.0, Value::from(CYCLE.1)), ("channels", Value::Int(1))];
    let mut f = fabric("segment", torus([8, 1, 1], 1), &extra);
    // Ring of 8, one channel per link: A 2→4 holds the link 2→3 that B 0→3 needs.
    f.submit(0.0, &Transfer::new(0, 2, 4, 4096, Kind::Eager));
    f.submit(0.0, &Transfer::new(1, 0, 3, 4096, Kind::Eager));
    let d = drain(f.as_mut());
    // A has the whole path (4 links: 80 ns + 102.4 ns). B's walk stops at link 2→3 and
    // steps back to switch 2 (switch 0 is B's own node, not a segment end): segment =
    // injection, 0→1, 1→2, 60 ns + 102.4 ns, in the buffer at 162.4. When A frees
    // (182.4) B reserves the 2 links left: 40 ns + 102.4 ns.
    assert_eq!((d[0].id, d[0].at), (0, 182.4));
    assert_eq!((d[1].id, d[1].info.path), (1, 1));
    assert!(
        (d[1].at - (182.4 + 40.0 + 102.4)).abs() < 1e-9,
        "{}",
        d[1].at
    );
    assert!((d[1].info.wait_ns - 20.0).abs() < 1e-9);
    let s = |k| stat(f.as_ref(), 400.0, k);
    assert_eq!(
        (s("packets_buffered_0"), s("packets_buffered_1")),
        (1.0, 1.0)
    );
    assert_eq!((s("channels_held"), s("buffer_entries_held")), (0.0, 0.0));
    // Without buffers segment switching is packetised circuit switching: B waits for A and
    // then reserves its 5 links.
    let mut g = fabric("segment", torus([8, 1, 1], 0), &extra);
    g.submit(0.0, &Transfer::new(0, 2, 4, 4096, Kind::Eager));
    g.submit(0.0, &Transfer::new(1, 0, 3, 4096, Kind::Eager));
    assert!((drain(g.as_mut())[1].at - (182.4 + 100.0 + 102.4)).abs() < 1e-9);
}

#[test]
fn a_packet_never_parks_in_its_own_or_its_destination_s_switch() {
    // Seed 002 §IV-A: segments start at the source and end at the destination; on the
    // torus an endpoint and its router are one node. B 1→3 on a ring of 4 is blocked by A
    // 0→2 at link 1→2, right after its own switch: no segment, it waits like a circuit.
    let extra = [(CYCLE.0, Value::from(CYCLE.1)), ("channels", Value::Int(1))];
    let mut f = fabric("segment", torus([4, 1, 1], 1), &extra);
    f.submit(0.0, &Transfer::new(0, 0, 2, 4096, Kind::Eager));
    f.submit(0.0, &Transfer::new(1, 1, 3, 4096, Kind::Eager));
    let d = drain(f.as_mut());
    assert_eq!((d[1].id, d[1].info.path, d[1].info.wait_ns), (1, 0, 0.0));
    assert!((d[1].at - 2.0 * 182.4).abs() < 1e-9, "{}", d[1].at);
}

/// Seed 002 §V: every node sends `per_node` messages to uniform random other nodes, 80 %
/// 4 KB and 20 % 512 KB, all offered at once. Returns (makespan, stats).
pub(crate) fn seed002(f: &mut dyn Fabric, per_node: u32, seed: u64) -> (f64, Vec<(String, f64)>) {
    let nodes = f.endpoints().unwrap();
    let mut rng = SplitMix64::new(seed);
    let mut id = 0u32;
    for src in 0..nodes {
        for _ in 0..per_node {
            let d = rng.below(u64::from(nodes - 1)) as u32;
            let dst = d + u32::from(d >= src);
            let bytes = if rng.below(5) < 4 { 4096 } else { 512 * 1024 };
            f.submit(0.0, &Transfer::new(id, src, dst, bytes, Kind::Eager));
            id += 1;
        }
    }
    let d = drain(f);
    // Invariant: every message delivered exactly once.
    let mut seen = vec![false; id as usize];
    for x in &d {
        assert!(
            !std::mem::replace(&mut seen[x.id as usize], true),
            "{} twice",
            x.id
        );
    }
    assert!(seen.iter().all(|&s| s), "a message was lost");
    let end = d.iter().map(|x| x.at).fold(0.0, f64::max);
    let mut s = Vec::new();
    f.stats(end, &mut s);
    let get = |k: &str| s.iter().find(|x| x.0 == k).unwrap().1;
    assert_eq!(
        (get("channels_held"), get("buffer_entries_held")),
        (0.0, 0.0)
    );
    (end, s)
}

fn get(s: &[(String, f64)], k: &str) -> f64 {
    s.iter().find(|x| x.0 == k).map_or(f64::NAN, |x| x.1)
}

#[test]
fn packetisation_raises_link_utilisation_and_segments_speed_up_on_the_torus() {
    let run = |mode: &str, every: i64, buffer: i64| {
        let extra = [("buffer_bytes", Value::Int(buffer))];
        let mut f = fabric(mode, torus([8, 8, 8], every), &extra);
        seed002(f.as_mut(), per_node(), 1)
    };
    let (circuit, cs) = run("circuit", 0, 0);
    let (packet, ps) = run("packet", 0, 0);
    let (all, als) = run("segment", 1, 1 << 20);
    let (quarter, _) = run("segment", 4, 1 << 20);
    let (cu, pu) = (
        get(&cs, "link_utilisation_mean"),
        get(&ps, "link_utilisation_mean"),
    );
    eprintln!("torus circuit {circuit} util {cu}; packet {packet} util {pu}; segment all {all} util {} quarter {quarter}", get(&als, "link_utilisation_mean"));
    assert!(pu > cu, "packetised {pu} vs circuit {cu}");
    assert!(circuit / all > 1.0 && circuit / all > circuit / quarter);
}

#[test]
fn fat_tree_packetisation_and_segments_beat_circuits() {
    let run = |mode: &str, levels: i64, buffer: i64| {
        let mut f = fabric(
            mode,
            fat_tree(8, 3, levels),
            &[("buffer_bytes", Value::Int(buffer))],
        );
        seed002(f.as_mut(), per_node(), 1)
    };
    let (circuit, cs) = run("circuit", 0, 0);
    let (packet, ps) = run("packet", 0, 0);
    let (cu, pu) = (
        get(&cs, "link_utilisation_mean"),
        get(&ps, "link_utilisation_mean"),
    );
    let small = [1, 3].map(|l| circuit / run("segment", l, 32 << 10).0);
    let large = [1, 3].map(|l| circuit / run("segment", l, 16 << 20).0);
    eprintln!("fat tree circuit {circuit} util {cu}; packet {packet} util {pu}; 32K {small:?} 16M {large:?}");
    assert!(pu > cu, "packetised {pu} vs circuit {cu}");
    assert!(
        small.iter().chain(&large).all(|&s| s > 1.0),
        "{small:?} {large:?}"
    );
}

/// Messages per node of the seed workload in these tests (seed: 100; TAILCAST_SEED002_MESSAGES
/// overrides it for exploration in release builds).
fn per_node() -> u32 {
    std::env::var("TAILCAST_SEED002_MESSAGES").map_or(20, |v| v.parse().unwrap())
}
