//! The `banyan_circuit` (Gemini) model: control-signal latency (seed 003 Eq. 3), setup round
//! trip (Eq. 4), utilisation efficiency without contention (Eq. 9) and saturation of the
//! basic and VOQ protocols (§4.3, §5).

use replay_engine::fabric::schema::Value;
use replay_engine::fabric::{Delivery, Fabric, Kind, Submitted, Transfer};
use replay_engine::prng::SplitMix64;
use replay_engine::FabricSpec;

/// Γ = 1 MiB / 64 B = 16384 with the default l_sig; Θ = 2.4 / 0.2 = 12.
const MIB: u64 = 1 << 20;

fn gemini(pairs: &[(&str, Value)]) -> Box<dyn Fabric> {
    let mut all = vec![("model", Value::from("banyan_circuit"))];
    all.extend(pairs.iter().cloned());
    FabricSpec::from_pairs(all)
        .unwrap()
        .build(0)
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

/// t_sig = 64 B / (0.2 Gb/s) = 2560 ns.
const T_SIG: f64 = 2560.0;

#[test]
fn a_control_message_takes_eq_3_and_a_lone_message_eq_4_plus_its_insertion() {
    let mut f = gemini(&[("ports", Value::Int(16))]);
    let rts = Transfer::new(0, 3, 12, MIB, Kind::Rts);
    assert_eq!(f.submit(0.0, &rts), Submitted::Later);
    let d = run(f.as_mut());
    // Eq. 3: t_sig((1 + α) log2 N + 1) = 2560 (2.25 · 4 + 1).
    assert_eq!(d[0].at, T_SIG * (2.25 * 4.0 + 1.0));
    assert_eq!((d[0].info.path, d[0].info.hops), (1, 5));
    let msg = Transfer::new(1, 3, 12, MIB, Kind::Rendezvous);
    f.submit(100_000.0, &msg);
    let d = run(f.as_mut());
    let rtt = 2.0 * T_SIG * (2.25 * 4.0 + 1.0); // Eq. 4
    let busy = MIB as f64 * 8.0 / 2.4;
    assert!((d[0].at - (100_000.0 + rtt + busy)).abs() < 1e-6);
    assert_eq!(
        (d[0].info.setup_ns, d[0].info.blocked, d[0].info.path),
        (rtt, 0, 0)
    );
    assert!(d[0].info.wait_ns.abs() < 1e-6);
}

/// Every source sends `per_source` messages of 1 MiB to source XOR 1 at once (a permutation
/// the Banyan passes without conflict, in both directions): the infinite-load,
/// contention-free regime of §4.2. Utilisation over the run, whose end is when the last
/// teardown has entered the network (t_sig after the last delivery).
fn utilisation_without_contention(ports: u32, alpha: f64) -> f64 {
    let mut f = gemini(&[
        ("ports", Value::from(ports)),
        ("alpha_sig", Value::from(alpha)),
    ]);
    let per_source = 4;
    let mut id = 0;
    for _ in 0..per_source {
        for s in 0..ports {
            f.submit(0.0, &Transfer::new(id, s, s ^ 1, MIB, Kind::Rendezvous));
            id += 1;
        }
    }
    let d = run(f.as_mut());
    assert_eq!(d.len() as u32, ports * per_source);
    assert!(d.iter().all(|x| x.info.blocked == 0));
    let end = d.iter().map(|x| x.at).fold(0.0, f64::max) + T_SIG;
    stat(f.as_ref(), end, "optical_utilisation")
}

fn eq9(gamma: f64, theta: f64, alpha: f64, ports: u32) -> f64 {
    let log2n = f64::from(ports.trailing_zeros());
    gamma / (gamma + theta * (2.0 * (1.0 + alpha) * log2n + 3.0))
}

#[test]
fn without_contention_the_utilisation_efficiency_is_eq_9() {
    for ports in [4u32, 8, 16, 32] {
        for alpha in [1.25, 1.0] {
            let sim = utilisation_without_contention(ports, alpha);
            let eq = eq9(16384.0, 12.0, alpha, ports);
            assert!(
                (sim - eq).abs() < 1e-9,
                "N = {ports}, α = {alpha}: {sim} vs {eq}"
            );
        }
    }
    // §4.3 quotes 99.20, 98.91, 98.63 and 98.34 % for N = 4..32 "according to Equation 9"
    // with Γ = 16384, Θ = 12, α_sig = 1.25. Those are Eq. 9 at α_sig = 1 (as in Fig. 13);
    // at 1.25 Eq. 9 gives 99.13, 98.81, 98.48 and 98.17 %.
    for (ports, quoted) in [(4u32, 99.20), (8, 98.91), (16, 98.63), (32, 98.34)] {
        let at_1 = 100.0 * eq9(16384.0, 12.0, 1.0, ports);
        let at_125 = 100.0 * eq9(16384.0, 12.0, 1.25, ports);
        assert!((at_1 - quoted).abs() < 0.005, "{ports}: {at_1}");
        assert!((at_125 - quoted).abs() > 0.05, "{ports}: {at_125}");
    }
}

/// Sources kept backlogged with `backlog` messages of 1 MiB to uniformly random other
/// terminals; throughput normalised to Eq. 8 over the messages delivered after a warm-up.
fn saturated(protocol: &str, ports: u32, seed: u64) -> (f64, f64) {
    let mut f = gemini(&[
        ("ports", Value::from(ports)),
        ("protocol", Value::from(protocol)),
    ]);
    let mut rng = SplitMix64::new(seed);
    let dst =
        |s: u32, rng: &mut SplitMix64| (s + 1 + rng.below(u64::from(ports - 1)) as u32) % ports;
    let backlog = 2 * ports;
    let mut next_id = 0u32;
    let mut src_of = Vec::new();
    for s in 0..ports {
        for _ in 0..backlog {
            let d = dst(s, &mut rng);
            f.submit(0.0, &Transfer::new(next_id, s, d, MIB, Kind::Rendezvous));
            src_of.push(s);
            next_id += 1;
        }
    }
    let busy = MIB as f64 * 8.0 / 2.4;
    let (warm, end) = (20.0 * busy, 120.0 * busy);
    let mut out = Vec::new();
    let mut counted = 0u64;
    while let Some(t) = f.next_time() {
        if t > end {
            break;
        }
        out.clear();
        f.advance(t, &mut out);
        for d in &out {
            if d.at > warm {
                counted += 1;
            }
            let s = src_of[d.id as usize];
            let to = dst(s, &mut rng);
            f.submit(d.at, &Transfer::new(d.id, s, to, MIB, Kind::Rendezvous));
        }
    }
    let eta = eq9(16384.0, 12.0, 1.25, ports);
    let tput = counted as f64 * MIB as f64 / (end - warm);
    let tput_max = f64::from(ports) * eta * 2.4 / 8.0;
    (
        tput / tput_max,
        stat(f.as_ref(), end, "blocking_rate_per_s"),
    )
}

/// §4.3: the basic protocol saturates at 35–60 % of Eq. 8's throughput (lower for larger
/// networks: blocking); §5: VOQ gets close to it. Measured here: basic 0.50 (N = 8) and
/// 0.43 (N = 16); VOQ 0.86 and 0.87.
#[test]
fn basic_saturates_well_below_full_load_while_voq_approaches_it() {
    for ports in [8u32, 16] {
        let (basic, basic_blocking) = saturated("basic", ports, 1);
        let (voq, voq_blocking) = saturated("voq", ports, 1);
        assert!((0.35..0.6).contains(&basic), "N = {ports}: basic {basic}");
        assert!(voq > 0.85, "N = {ports}: voq {voq}");
        // §5, Fig. 20: VOQ sends setups knowing some will be blocked.
        assert!(voq_blocking > basic_blocking);
    }
}
