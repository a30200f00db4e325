//! Tests of the hybrid electrical / photonic model (seed 004): which network a message
//! takes, the exact zero-contention circuit time, and timeouts under contention with every
//! message delivered exactly once.

use std::collections::BTreeMap;

use crate::fabric::registry::FabricSpec;
use crate::fabric::schema::Value;
use crate::fabric::{Delivery, Fabric, Kind, Submitted, Transfer};

/// A 4×4×4 torus (64 endpoints, so a 4-ary 3-stage chip: 4 links per path).
fn hybrid(extra: &[(&str, Value)]) -> Box<dyn Fabric> {
    let mut pairs = vec![
        ("model", Value::from("photonic_hybrid")),
        (
            "torus_dims",
            Value::List(vec![Value::Int(4), Value::Int(4), Value::Int(4)]),
        ),
    ];
    pairs.extend(extra.iter().cloned());
    FabricSpec::from_pairs(pairs).unwrap().build(7).unwrap().fabric
}

fn stat(f: &dyn Fabric, now: f64, key: &str) -> f64 {
    let mut out = Vec::new();
    f.stats(now, &mut out);
    out.iter()
        .find(|(k, _)| k == key)
        .unwrap_or_else(|| panic!("no stat {key}"))
        .1
}

/// Plays the engine's rendezvous for `msgs` (id, src, dst, bytes), all sent at t = 0:
/// messages of more than `eager` bytes send an RTS, answer its arrival with a CTS and
/// send the data when the CTS arrives; others send their data at once. Returns the data
/// deliveries and the RTS deliveries.
fn replay(f: &mut dyn Fabric, msgs: &[(u32, u32, u32, u64)], eager: u64) -> (Vec<Delivery>, Vec<Delivery>) {
    let by_id: BTreeMap<u32, (u32, u32, u64)> = msgs.iter().map(|&(i, s, d, b)| (i, (s, d, b))).collect();
    let mut phase: BTreeMap<u32, Kind> = BTreeMap::new();
    let (mut data, mut rts) = (Vec::new(), Vec::new());
    // Data to submit later: (time bits, id).
    let mut due: BTreeMap<(u64, u32), ()> = BTreeMap::new();
    let on_data = |d: Delivery, data: &mut Vec<Delivery>| data.push(d);
    for &(id, src, dst, bytes) in msgs {
        let kind = if bytes > eager { Kind::Rts } else { Kind::Eager };
        phase.insert(id, kind);
        match f.submit(0.0, &Transfer::new(id, src, dst, bytes, kind)) {
            Submitted::At(at) => {
                assert_eq!(kind, Kind::Eager, "an RTS on the circuit path waits for its SETUP");
                on_data(Delivery { id, at, info: Default::default() }, &mut data);
            }
            Submitted::Later => {}
        }
    }
    let mut out = Vec::new();
    loop {
        let fabric_next = f.next_time();
        let due_next = due.keys().next().map(|&(t, id)| (f64::from_bits(t), id));
        match (fabric_next, due_next) {
            (None, None) => break,
            (_, Some((t, id))) if fabric_next.is_none_or(|n| t <= n) => {
                due.remove(&(t.to_bits(), id));
                let (s, d, b) = by_id[&id];
                phase.insert(id, Kind::Rendezvous);
                if let Submitted::At(at) = f.submit(t, &Transfer::new(id, s, d, b, Kind::Rendezvous)) {
                    on_data(Delivery { id, at, info: Default::default() }, &mut data);
                }
            }
            (Some(t), _) => {
                out.clear();
                f.advance(t, &mut out);
                for d in out.drain(..) {
                    if phase[&d.id] == Kind::Rts {
                        rts.push(d);
                        let (s, dd, b) = by_id[&d.id];
                        phase.insert(d.id, Kind::Cts);
                        let cts = Transfer::new(d.id, dd, s, b, Kind::Cts);
                        if let Submitted::At(at) = f.submit(d.at, &cts) {
                            due.insert((at.to_bits(), d.id), ());
                        }
                    } else if phase[&d.id] == Kind::Cts {
                        // The CTS (with the PATH-ACK) is back: the data leaves.
                        due.insert((d.at.to_bits(), d.id), ());
                    } else {
                        on_data(d, &mut data);
                    }
                }
            }
            (None, Some(_)) => unreachable!(),
        }
    }
    (data, rts)
}

#[test]
fn messages_at_or_above_the_threshold_take_circuits_and_smaller_ones_the_torus() {
    let mut f = hybrid(&[]);
    // Straddling the 8 KiB threshold, eager by an engine threshold of 64 KiB and
    // rendezvous above it; distinct pairs so nothing contends.
    let sizes = [1u64, 4096, 8191, 8192, 8193, 65536, 65537, 1 << 20];
    let msgs: Vec<_> = sizes
        .iter()
        .enumerate()
        .map(|(i, &b)| (i as u32, i as u32, 63 - i as u32, b))
        .collect();
    let (data, _) = replay(f.as_mut(), &msgs, 65536);
    assert_eq!(data.len(), sizes.len());
    for d in &data {
        let bytes = sizes[d.id as usize];
        let want = u8::from(bytes >= 8192);
        assert_eq!(d.info.path, want, "{bytes} B went on class {}", d.info.path);
    }
    assert_eq!(stat(f.as_ref(), 1e6, "circuit_messages"), 5.0);
    assert_eq!(stat(f.as_ref(), 1e6, "packet_messages"), 3.0);
}

#[test]
fn a_circuit_message_alone_takes_the_setup_round_trip_plus_the_bytes() {
    // Propagation 0 so the message time is exactly RTT + bytes / circuit bandwidth.
    let mut f = hybrid(&[("circuit_propagation_ns", Value::from(0.0))]);
    let bytes = 1u64 << 20;
    let (data, rts) = replay(f.as_mut(), &[(0, 1, 42, bytes)], 8192);
    // Setup network hop: 100 + 2 + 2 ns + 16 B at 1 Gb/s = 232 ns (Table IV); a path
    // crosses 4 links of the 4-ary 3-stage chip; SETUP out + PATH-ACK (the CTS) back.
    let hop = 100.0 + 2.0 + 2.0 + 16.0 * 8.0 / 1.0;
    let round_trip = 2.0 * 4.0 * hop;
    let rate = 71.0 * 10.0 / 8.0; // 71 wavelengths × 10 Gb/s in bytes/ns
    assert_eq!(rts[0].at, 4.0 * hop);
    assert_eq!(data[0].at, round_trip + bytes as f64 / rate);
    assert_eq!(data[0].info.setup_ns, round_trip);
    assert_eq!(data[0].info.blocked, 0);
    assert_eq!(data[0].info.wait_ns, 0.0);
    assert_eq!(data[0].info.hops, 4);
    // With the seed's 100 ns propagation the data arrives 100 ns later.
    let mut g = hybrid(&[]);
    let (data, _) = replay(g.as_mut(), &[(0, 1, 42, bytes)], 8192);
    assert_eq!(data[0].at, round_trip + bytes as f64 / rate + 100.0);
}

#[test]
fn a_message_without_rts_sets_its_circuit_up_when_submitted() {
    let mut f = hybrid(&[("circuit_propagation_ns", Value::from(0.0))]);
    let bytes = 8192u64;
    // Eager by the engine (threshold 64 KiB) but at the fabric's circuit threshold.
    let (data, rts) = replay(f.as_mut(), &[(3, 5, 6, bytes)], 65536);
    assert!(rts.is_empty());
    let hop = 232.0;
    assert_eq!(data[0].at, 8.0 * hop + bytes as f64 / (71.0 * 10.0 / 8.0));
    assert_eq!(data[0].info.path, 1);
}

#[test]
fn contention_causes_timeouts_and_backoff_and_loses_or_duplicates_nothing() {
    let mut f = hybrid(&[]);
    // 48 senders of 1 MiB into endpoint 0 (one circuit at a time through its port, 11.8 us
    // each against a 15 us path timeout), plus an all-to-one of small messages on the torus
    // and a shuffle of large ones through the chip.
    let mut msgs = Vec::new();
    for s in 1..49u32 {
        msgs.push((msgs.len() as u32, s, 0, 1 << 20));
        msgs.push((msgs.len() as u32, s, 0, 512));
        msgs.push((msgs.len() as u32, s, (s * 37 + 5) % 64, 300_000));
    }
    msgs.retain(|m| m.1 != m.2);
    let (data, rts) = replay(f.as_mut(), &msgs, 8192);
    let mut seen: BTreeMap<u32, u32> = BTreeMap::new();
    for d in &data {
        *seen.entry(d.id).or_default() += 1;
    }
    assert_eq!(seen.len(), msgs.len(), "every message delivered");
    assert!(seen.values().all(|&n| n == 1), "no message delivered twice");
    let rts_ids: std::collections::BTreeSet<u32> = rts.iter().map(|d| d.id).collect();
    assert_eq!(rts_ids.len(), rts.len(), "each RTS delivered once");
    let end = data.iter().map(|d| d.at).fold(0.0, f64::max);
    let timeouts = stat(f.as_ref(), end, "circuit_timeouts");
    let setups = stat(f.as_ref(), end, "circuit_setups");
    let circuits = msgs.iter().filter(|m| m.3 >= 8192).count() as f64;
    assert!(timeouts > 0.0, "a hot spot times SETUPs out");
    assert_eq!(setups, circuits + timeouts, "one new SETUP per timeout");
    assert_eq!(stat(f.as_ref(), end, "circuits_delivered"), circuits);
    assert!(data.iter().any(|d| d.info.blocked > 0 && d.info.wait_ns > 0.0));
    // Everything torn down at the end: no link held, no circuit open.
    assert_eq!(stat(f.as_ref(), end, "chip_links_held"), 0.0);
    assert_eq!(stat(f.as_ref(), end, "circuits_open"), 0.0);
    // The hot spot serialises: the last 1 MiB message cannot finish before 48 of them
    // back to back on endpoint 0's port.
    let one = (1u64 << 20) as f64 / (71.0 * 10.0 / 8.0);
    assert!(end >= 48.0 * one);
}

#[test]
fn a_late_receiver_makes_the_setup_time_out_at_the_destination_and_retry() {
    let mut f = hybrid(&[]);
    let f = f.as_mut();
    let bytes = 1u64 << 20;
    let mut out = Vec::new();
    assert_eq!(f.submit(0.0, &Transfer::new(0, 1, 42, bytes, Kind::Rts)), Submitted::Later);
    // Run to 40 us without answering: the RTS arrives once; the SETUPs time out.
    while let Some(t) = f.next_time().filter(|&t| t <= 40_000.0) {
        f.advance(t, &mut out);
    }
    assert_eq!(out.len(), 1, "the RTS, once");
    assert_eq!(out[0].at, 4.0 * 232.0);
    let at_dst = stat(f, 40_000.0, "circuit_timeouts_at_destination");
    assert!(at_dst >= 2.0, "{at_dst}");
    // The receiver answers at 40 us: the CTS comes back with a PATH-ACK, then the data.
    out.clear();
    assert_eq!(f.submit(40_000.0, &Transfer::new(0, 42, 1, bytes, Kind::Cts)), Submitted::Later);
    while let Some(t) = f.next_time() {
        f.advance(t, &mut out);
        if let Some(cts) = out.iter().find(|d| d.info.path == 0) {
            let at = cts.at;
            out.clear();
            f.submit(at, &Transfer::new(0, 1, 42, bytes, Kind::Rendezvous));
        }
    }
    assert_eq!(out.len(), 1, "the data, once");
    assert!(out[0].info.setup_ns > 40_000.0 && out[0].info.blocked as f64 >= at_dst);
    assert_eq!(stat(f, 1e6, "chip_links_held"), 0.0);
}
