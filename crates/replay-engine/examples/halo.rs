//! Profiling driver: replays the synthetic halo + allreduce trace of bench/replay_bench.py
//! (per rank and iteration: irecv left, irecv right, isend left, isend right, waitall,
//! 8-byte allreduce) and prints throughput and a checksum of every simulated time.
//!
//! cargo run --release -p replay-engine --example halo -- RANKS ACTIONS
//!     [ideal|crossbar|fattree|torus] [HALO_BYTES] [OVERHEAD_NS] [REPEATS] [NOISE_PER_S]
//!     [CLOSED_FORMS]
//! (NOISE_PER_S > 0: host noise, Poisson detours of 10 µs at that rate per rank, which
//! runs collectives step by step; CLOSED_FORMS 0 does that without noise, to compare)
//! (flow models, one endpoint per rank: crossbar; 4-ary n-tree with 4^n >= RANKS, d-mod-k;
//! 3-D torus of the most cubic shape holding RANKS)

use std::time::Instant;

use replay_engine::fabric::schema::Value;
use replay_engine::TraceColumns;
use replay_engine::{replay, FabricSpec, JobInput, Placement, ReplayOptions};

const PER_ITERATION: usize = 6;

/// The `[topology]` table of a flow fabric for `ranks` endpoints.
fn topology(name: &str, ranks: u32) -> Value {
    let kind = |k: &str| ("kind", Value::from(k));
    match name {
        "crossbar" => Value::table([kind("crossbar"), ("endpoints", Value::from(ranks))]),
        "fattree" => {
            let n = (1..)
                .find(|&n| 4u64.pow(n) >= u64::from(ranks))
                .expect("levels");
            Value::table([
                kind("fat_tree"),
                ("k", Value::Int(4)),
                ("n", Value::from(n)),
            ])
        }
        "torus" => {
            // x >= y >= z, as close to a cube as possible, x * y * z >= ranks.
            let side = |n: u32, d: u32| (1..=n).find(|&s| u64::from(s).pow(d) >= u64::from(n));
            let z = side(ranks, 3).expect("z");
            let y = side(ranks.div_ceil(z), 2).expect("y");
            let x = ranks.div_ceil(z * y);
            let dims = Value::from(vec![x, y, z]);
            Value::table([kind("torus3d"), ("dims", dims)])
        }
        other => panic!("unknown fabric {other}: ideal|crossbar|fattree|torus"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let ranks: usize = args.get(1).map_or(16, |a| a.parse().expect("ranks"));
    let actions: usize = args
        .get(2)
        .map_or(1_600_000, |a| a.parse().expect("actions"));
    let fabric = args.get(3).map_or("ideal", String::as_str);
    let halo: i64 = args
        .get(4)
        .map_or(16384, |a| a.parse().expect("halo bytes"));
    let overhead: f64 = args
        .get(5)
        .map_or(300.0, |a| a.parse().expect("overhead ns"));
    let repeats: usize = args.get(6).map_or(1, |a| a.parse().expect("repeats"));
    let noise_per_s: f64 = args.get(7).map_or(0.0, |a| a.parse().expect("noise per s"));
    let closed_forms = args.get(8).is_none_or(|a| a != "0");
    let iterations = (actions / (ranks * PER_ITERATION)).max(1);
    let n = ranks * iterations * PER_ITERATION;
    let (mut rank, mut seq, mut op, mut peer) = (vec![], vec![], vec![], vec![]);
    let (mut bytes, mut request, mut iteration) = (vec![], vec![], vec![]);
    for r in 0..ranks {
        let left = ((r + ranks - 1) % ranks) as i32;
        let right = ((r + 1) % ranks) as i32;
        for it in 0..iterations {
            for slot in 0..PER_ITERATION {
                rank.push(r as u32);
                seq.push((it * PER_ITERATION + slot) as i64);
                op.push([6u8, 6, 5, 5, 11, 35][slot]);
                peer.push([left, right, left, right, -2, -2][slot]);
                bytes.push([halo, halo, halo, halo, 0, 8][slot]);
                request.push(if slot < 4 { slot as i64 } else { -1 });
                iteration.push(it as i32);
            }
        }
    }
    let (zeros32, zeros64, root) = (vec![0i32; n], vec![0i64; n], vec![-1i32; n]);
    let columns = TraceColumns {
        rank: &rank,
        seq: &seq,
        op: &op,
        peer: &peer,
        root: &root,
        send_bytes: &bytes,
        recv_bytes: &bytes,
        tag: &zeros32,
        comm: &zeros32,
        request: &request,
        t_start_ns: &zeros64,
        t_end_ns: &zeros64,
        iteration: &iteration,
        ..TraceColumns::default()
    };
    let pairs = match fabric {
        "ideal" => vec![
            ("model", Value::from("alpha_beta")),
            ("alpha_us", Value::from(1.0)),
            ("beta_ns_per_byte", Value::from(0.1)),
            // as the bundled `ideal` fabric: contention-free endpoints
            ("ports", Value::Int(0)),
        ],
        _ => vec![
            ("model", Value::from("flow")),
            ("topology", topology(fabric, ranks as u32)),
            ("link_bandwidth_gbps", Value::from(100.0)),
            ("hop_latency_ns", Value::from(100.0)),
            ("overhead_ns", Value::from(overhead)),
            ("gamma_ns_per_byte", Value::from(0.05)),
        ],
    };
    let mut pairs = pairs;
    if noise_per_s > 0.0 {
        let noise = Value::table([
            ("kind", Value::from("poisson")),
            ("rate_per_s", Value::from(noise_per_s)),
            ("length_ns", Value::from(10_000.0)),
        ]);
        pairs.push(("host", Value::table([("noise", noise)])));
    }
    let spec = FabricSpec::from_pairs(pairs).expect("fabric");
    let options = ReplayOptions {
        compute_scale: 0.0,
        closed_form_collectives: closed_forms,
        ..ReplayOptions::default()
    };
    let jobs = [JobInput {
        columns,
        placement: Placement::Linear { offset: 0 },
        foreground: true,
    }];
    // Best of REPEATS replays in one process: the first one's output arrays are fresh
    // memory, whose page faults and zeroing vary widely on a VM.
    let mut best = None::<(f64, _)>;
    for _ in 0..repeats {
        let t0 = Instant::now();
        let out = replay(&jobs, Vec::new(), &spec, &options).expect("replay");
        let secs = t0.elapsed().as_secs_f64();
        if best.as_ref().is_none_or(|(b, _)| secs < *b) {
            best = Some((secs, out));
        }
    }
    let (secs, out) = best.expect("at least one replay");
    let (results, stats) = (out.jobs, out.stats);
    let mut sum = 0u64;
    for (i, (s, e)) in results[0]
        .sim_start_ns
        .iter()
        .zip(&results[0].sim_end_ns)
        .enumerate()
    {
        sum = sum
            .wrapping_mul(0x100000001b3)
            .wrapping_add(s.to_bits() ^ e.to_bits().rotate_left(17) ^ i as u64);
    }
    println!(
        "{fabric} ranks={ranks} actions={} messages={} events={} secs={secs:.4} \
         Mactions/s={:.2} total_ns={} checksum={sum:016x}",
        stats.actions,
        stats.messages,
        stats.events,
        stats.actions as f64 / secs / 1e6,
        results[0].total_time_ns,
    );
}
