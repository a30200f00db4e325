//! Zero load: a single-packet message takes the same time under packet contention as
//! under flow contention on every bundled topology fabric, for pairs at every distance;
//! on CODES' dfp-test a 1024-byte message takes CODES' times per path class.

mod fabric_support;

use fabric_support::{build, bundled, deliver_alone, packet};
use replay_engine::fabric::schema::Value;

#[test]
fn a_single_packet_takes_the_flow_models_time_on_every_bundled_topology() {
    let fabrics = [
        "crossbar",
        "fat-tree-16",
        "torus-4x4x4",
        "tree-2x2x4",
        "lab",
    ];
    let mut checked = 0;
    for name in fabrics {
        let mut table = bundled(name);
        // Without its token buckets (the next test keeps them): the lab's links at their rates.
        if let Some(Value::List(levels)) = table.get_mut("levels") {
            for level in levels {
                if let Value::Table(t) = level {
                    for key in ["burst_bytes", "max_packet_bytes", "peak_bandwidth_gbps"] {
                        t.remove(key);
                    }
                }
            }
        }
        let flow = Value::Table(table.clone());
        let pkt = packet(table, &[("packet_bytes", Value::Int(2048))]);
        let endpoints = build(&flow, 0).endpoints().expect("a topology");
        // every destination from endpoint 0 and a few from the far end
        let pairs = (1..endpoints)
            .map(|d| (0, d))
            .chain([(endpoints - 1, 0), (5 % endpoints, 3 % endpoints)]);
        for (src, dst) in pairs.filter(|(s, d)| s != d) {
            for bytes in [1u64, 1000, 2048] {
                let mut f = build(&flow, 0);
                let a = deliver_alone(f.as_mut(), 100.0, src, dst, bytes);
                let mut p = build(&pkt, 0);
                let b = deliver_alone(p.as_mut(), 100.0, src, dst, bytes);
                let tol = 1e-9 * a.at;
                assert!(
                    (a.at - b.at).abs() <= tol,
                    "{name} {src}->{dst} {bytes} B: flow {} packet {}",
                    a.at,
                    b.at
                );
                assert_eq!(a.info.hops, b.info.hops, "{name} {src}->{dst}");
                checked += 1;
                assert!(
                    b.info.wait_ns < 1e-6,
                    "{name}: no queueing alone, {}",
                    b.info.wait_ns
                );
            }
        }
    }
    eprintln!("{checked} (fabric, pair, size) cases");
    assert!(checked > 500);
}

/// The lab with its htb buckets: a packet after idle leaves at the peak in both engines
/// (the flow engine's bucket, burst plus its `max_packet_bytes` overdraft, covers it; the
/// packet engine sends any packet on tokens ≥ 0), so their zero-load times still agree.
#[test]
fn a_single_packet_takes_the_flow_models_time_through_the_labs_shapers() {
    let flow = bundled("lab");
    let mut table = flow.clone();
    if let Some(Value::List(levels)) = table.get_mut("levels") {
        for level in levels {
            if let Value::Table(t) = level {
                t.remove("max_packet_bytes"); // the flow engine's stand-in for the packet
            }
        }
    }
    let keys = [
        ("packet_bytes", Value::Int(62636)),
        ("buffer_bytes", Value::Int(62636)),
    ];
    let pkt = packet(table, &keys);
    let flow = Value::Table(flow);
    for (src, dst) in [(0, 1), (0, 5), (0, 9), (15, 2)] {
        for bytes in [1u64, 32_768, 62_636] {
            let a = deliver_alone(build(&flow, 0).as_mut(), 100.0, src, dst, bytes);
            let b = deliver_alone(build(&pkt, 0).as_mut(), 100.0, src, dst, bytes);
            assert!(
                (a.at - b.at).abs() <= 1e-9 * a.at,
                "lab {src}->{dst} {bytes} B: flow {} packet {}",
                a.at,
                b.at
            );
        }
    }
}

/// CODES' dragonfly-plus zero-load times on dfp-test for a 1024-byte message (see
/// tests/replay/test_dragonfly_fabric.py): Σ over routers of router delay + chunk / link
/// bandwidth, plus the host's chunk / terminal bandwidth.
#[test]
fn a_dfp_test_packet_takes_codes_times_per_path_class() {
    let cases = [
        ("adaptive", 1, 2, "minimal", 338.4),
        ("adaptive", 5, 4, "minimal", 901.7),
        ("adaptive", 48, 5, "minimal", 1637.5),
        ("valiant", 48, 8, "non_minimal", 2936.6),
    ];
    for (routing, dst, hops, path, codes_ns) in cases {
        let mut table = bundled("dfp-test");
        table.insert("routing".into(), Value::from(routing));
        let mut f = build(&packet(table, &[]), 0);
        let d = deliver_alone(f.as_mut(), 0.0, 0, dst, 1024);
        assert!(
            (d.at / codes_ns - 1.0).abs() < 0.02,
            "{routing} 0->{dst}: {}",
            d.at
        );
        assert_eq!(d.info.hops, hops);
        assert_eq!(f.path_classes()[d.info.path as usize], path);
    }
}
