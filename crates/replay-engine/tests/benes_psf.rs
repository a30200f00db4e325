//! The `benes_psf` model through the fabric trait: Table I's energy figures from Table II's
//! parameters, circuit and TDM timing, blocking, the metrics it reports.

use replay_engine::fabric::schema::Value;
use replay_engine::fabric::{Delivery, Fabric, Kind, Submitted, Transfer};
use replay_engine::FabricSpec;

fn psf(extra: &[(&str, Value)]) -> Box<dyn Fabric> {
    let mut pairs = vec![("model", Value::from("benes_psf"))];
    pairs.extend(extra.iter().cloned());
    FabricSpec::from_pairs(pairs)
        .unwrap()
        .build(1)
        .unwrap()
        .fabric
}

fn stat(f: &dyn Fabric, now: f64, key: &str) -> f64 {
    let mut out = Vec::new();
    f.stats(now, &mut out);
    out.iter()
        .find(|s| s.0 == key)
        .unwrap_or_else(|| panic!("no {key}"))
        .1
}

fn run(f: &mut dyn Fabric) -> Vec<Delivery> {
    let mut out = Vec::new();
    while let Some(t) = f.next_time() {
        f.advance(t, &mut out);
    }
    out
}

fn send(f: &mut dyn Fabric, now: f64, id: u32, src: u32, dst: u32, bytes: u64) {
    assert_eq!(
        f.submit(now, &Transfer::new(id, src, dst, bytes, Kind::Eager)),
        Submitted::Later
    );
}

/// Cells tuned at Table II's mean powers exactly (no spread across cells).
fn at_means() -> Vec<(&'static str, Value)> {
    vec![
        ("thermal_tuning_sd_mw", Value::from(0.0)),
        ("electrical_tuning_sd_mw", Value::from(0.0)),
    ]
}

#[test]
fn table_i_power_and_energy_per_bit_follow_from_table_ii() {
    // Table I: a 20 W controller plus every MZI tuned (TO 15.725 mW + EO 5.166 mW, Table II
    // means) over the switching capacity N × 512 Gb/s. A Beneš of N ports has
    // (2 log2 N − 1) N/2 MZIs: 56, 144, 352. 16 ports: (20 + 56 × 0.020891) W = 21.17 W
    // over 8.192 Tb/s = 2.58 pJ/bit; 32: 23.01 W, 1.40; 64: 27.35 W, 0.83; 64 ports at
    // 400 Gb/s (25 λ): 1.07.
    for (ports, wavelengths, watts, pj) in [
        (16, 32, 21.2, 2.6),
        (32, 32, 23.0, 1.4),
        (64, 32, 27.3, 0.8),
        (64, 25, 27.3, 1.1),
    ] {
        let mut p = at_means();
        p.push(("ports", Value::Int(ports)));
        p.push(("wavelengths", Value::Int(wavelengths)));
        let f = psf(&p);
        let (w, e) = (
            stat(f.as_ref(), 1.0, "peak_power_w"),
            stat(f.as_ref(), 1.0, "peak_energy_pj_per_bit"),
        );
        // Table I truncates: 7.35 W of MZIs (§II-B: "between 1.2 W and 7.3 W") → 27.3 W.
        assert!((w - watts).abs() < 0.06, "{ports} ports: {w} W");
        assert!(
            (e - pj).abs() < 0.05 && (0.8 - 0.05..=2.6 + 0.05).contains(&e),
            "{ports}: {e} pJ/bit"
        );
    }
}

#[test]
fn a_circuit_takes_the_tuning_delay_then_the_port_rate_and_reports_its_path() {
    let mut f = psf(&at_means());
    // 512 Gb/s = 64 B/ns: 64 KB in 1024 ns after 3 ns of tuning.
    send(f.as_mut(), 10.0, 0, 0, 5, 65536);
    let d = run(f.as_mut());
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].at, 10.0 + 3.0 + 1024.0);
    assert_eq!(
        (d[0].info.setup_ns, d[0].info.wait_ns, d[0].info.blocked),
        (3.0, 0.0, 0)
    );
    assert_eq!(d[0].info.hops, 7); // 2 log2 16 − 1 stages
    assert_eq!(d[0].info.path, 0); // two server ports
                                   // Tuning energy: 7 cells in use for 1027 ns, each at 15.725 mW (+ 5.166 in bar).
    let e = stat(f.as_ref(), 2000.0, "mzi_energy_pj");
    assert!(
        e > 7.0 * 15.725 * 1027.0 - 1e-6 && e < 7.0 * 20.891 * 1027.0 + 1e-6,
        "{e}"
    );
    let bits = 65536.0 * 8.0;
    assert!((stat(f.as_ref(), 2000.0, "mzi_energy_pj_per_bit") - e / bits).abs() < 1e-12);
    let total = (e + 20_000.0 * 2000.0) / bits;
    assert!((stat(f.as_ref(), 2000.0, "energy_pj_per_bit") - total).abs() < 1e-9);
}

#[test]
fn output_contention_blocks_the_later_port_until_the_circuit_is_released() {
    let mut f = psf(&[("arbitration", Value::from("fifo"))]);
    send(f.as_mut(), 0.0, 0, 0, 5, 64_000); // 1000 ns
    send(f.as_mut(), 0.0, 1, 1, 5, 64_000);
    send(f.as_mut(), 0.0, 2, 13, 2, 6_400); // an uplink port, 100 ns, not in the way
    let d = run(f.as_mut());
    let by_id = |id: u32| d.iter().find(|x| x.id == id).unwrap();
    assert_eq!(by_id(0).at, 1003.0);
    assert_eq!(by_id(2).at, 103.0);
    assert_eq!(by_id(2).info.path, 1); // uplink class
                                       // Refused at 0 and again in the round port 13's release triggered at 103.
    let late = by_id(1);
    assert_eq!(
        (late.at, late.info.blocked, late.info.wait_ns),
        (2006.0, 2, 1003.0)
    );
    // Port 1 was blocked 1003 ns of the 2006 ns run.
    assert!((stat(f.as_ref(), 2006.0, "port_01_blocking_ratio") - 0.5).abs() < 1e-12);
    assert_eq!(stat(f.as_ref(), 2006.0, "port_00_blocking_ratio"), 0.0);
    assert_eq!(stat(f.as_ref(), 2006.0, "refusals"), 2.0);
}

#[test]
fn tdm_interleaves_contending_flows_slot_by_slot() {
    // Slots of 6400 B = 100 ns + 3 ns tuning. Two flows into output 5: A (0 → 5) of 3
    // slots and B (1 → 5) of 1.5 slots alternate (FIFO: the refused port goes first next).
    let mut f = psf(&[
        ("switching", Value::from("tdm")),
        ("slot_bytes", Value::Int(6400)),
    ]);
    send(f.as_mut(), 0.0, 0, 0, 5, 19_200);
    send(f.as_mut(), 0.0, 1, 1, 5, 9_600);
    let d = run(f.as_mut());
    let at = |id: u32| d.iter().find(|x| x.id == id).unwrap().at;
    // Slots: A B A B(half: 3 + 50 ns) A → B ends at 3·103 + 53, A at 5·103.
    assert!((at(1) - (3.0 * 103.0 + 53.0)).abs() < 1e-9, "{}", at(1));
    assert!((at(0) - 5.0 * 103.0).abs() < 1e-9, "{}", at(0));
    let a = d.iter().find(|x| x.id == 0).unwrap();
    assert_eq!((a.info.setup_ns, a.info.blocked), (9.0, 2));
    // A flow arriving mid-slot waits for the next boundary.
    send(f.as_mut(), 1000.0, 2, 3, 4, 640);
    let d = run(f.as_mut());
    assert!(
        (d[0].at - (10.0 * 103.0 + 3.0 + 10.0)).abs() < 1e-9,
        "{}",
        d[0].at
    );
}

#[test]
fn control_messages_ride_circuits_only_with_rendezvous_through_the_fabric() {
    let spec = |r: &str| {
        FabricSpec::from_pairs([
            ("model", Value::from("benes_psf")),
            ("rendezvous", Value::from(r)),
        ])
        .unwrap()
    };
    assert!(!spec("none").build(0).unwrap().handshake);
    let built = spec("fabric").build(0).unwrap();
    assert!(built.handshake);
    let mut f = built.fabric;
    let rts = Transfer::new(4, 2, 9, 1 << 20, Kind::Rts);
    assert_eq!(f.submit(0.0, &rts), Submitted::Later);
    let d = run(f.as_mut());
    assert_eq!(d[0].at, 3.0 + 1.0); // 64 control bytes at 64 B/ns after tuning
}

#[test]
fn bad_parameters_name_their_key() {
    let e = FabricSpec::from_pairs([
        ("model", Value::from("benes_psf")),
        ("ports", Value::Int(12)),
    ])
    .unwrap()
    .build(0)
    .err()
    .unwrap();
    assert_eq!(e.key, "ports");
    let e = FabricSpec::from_pairs([
        ("model", Value::from("benes_psf")),
        ("arbitration", Value::from("lifo")),
    ])
    .unwrap_err();
    assert_eq!(e.key, "arbitration");
    assert!(e.message.contains("arr"), "{e}");
}
