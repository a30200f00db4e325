//! Profiling driver for the photonic segment model: seed 002's workload (§V: every node
//! sends MESSAGES messages to uniform random other nodes, 80 % 4 KB / 20 % 512 KB, all
//! offered at t = 0) on a SIDE³ torus, straight into the fabric (no MPI layer).
//!
//! cargo run --release -p replay-engine --example seed002 -- SIDE MESSAGES
//!     [circuit|packet|segment] [BUFFER_EVERY] [BUFFER_BYTES] [SEED]
//! Environment: SEQ=1 makes every node send its messages one after another (the next when
//! the previous one arrived) instead of all at once; FAT_TREE=1 uses a SIDE-ary 3-tree
//! with buffers on the top BUFFER_EVERY levels.

use std::time::Instant;

use replay_engine::fabric::schema::Value;
use replay_engine::fabric::{Fabric, Kind, Transfer};
use replay_engine::prng::SplitMix64;
use replay_engine::FabricSpec;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let arg = |i: usize, d: &str| a.get(i).cloned().unwrap_or_else(|| d.to_string());
    let side: i64 = arg(1, "6").parse().expect("SIDE");
    let per_node: u32 = arg(2, "100").parse().expect("MESSAGES");
    let mode = arg(3, "segment");
    let every: i64 = arg(4, "1").parse().expect("BUFFER_EVERY");
    let buffer: i64 = arg(5, "1048576").parse().expect("BUFFER_BYTES");
    let seed: u64 = arg(6, "1").parse().expect("SEED");
    // FAT_TREE=1: a SIDE-ary 3-tree with buffers on the top BUFFER_EVERY levels.
    let topology = if std::env::var_os("FAT_TREE").is_some() {
        Value::table([
            ("kind", Value::from("fat_tree")),
            ("k", Value::Int(side)),
            ("n", Value::Int(3)),
            ("buffer_levels", Value::Int(every)),
        ])
    } else {
        Value::table([
            ("kind", Value::from("torus3d")),
            ("dims", Value::List(vec![Value::Int(side); 3])),
            ("buffer_every", Value::Int(every)),
        ])
    };
    let spec = FabricSpec::from_pairs([
        ("model", Value::from("photonic_segment")),
        ("switching", Value::from(mode.as_str())),
        ("buffer_bytes", Value::Int(buffer)),
        ("topology", topology),
    ])
    .expect("spec");
    let mut f: Box<dyn Fabric> = spec.build(0).expect("build").fabric;
    let nodes = f.endpoints().expect("endpoints");
    // SEQ=1: a node sends its messages one after another (the next when the last arrived).
    let seq = std::env::var_os("SEQ").is_some();
    let mut rng = SplitMix64::new(seed);
    let mut todo: Vec<Vec<Transfer>> = Vec::new();
    let mut id = 0u32;
    for src in 0..nodes {
        let mut mine = Vec::new();
        for _ in 0..per_node {
            let d = rng.below(u64::from(nodes - 1)) as u32;
            let dst = d + u32::from(d >= src);
            let bytes = if rng.below(5) < 4 { 4096 } else { 512 * 1024 };
            mine.push(Transfer::new(id, src, dst, bytes, Kind::Eager));
            id += 1;
        }
        mine.reverse();
        todo.push(mine);
    }
    let mut src_of = vec![0u32; id as usize];
    for (n, list) in todo.iter_mut().enumerate() {
        for t in list.iter() {
            src_of[t.id as usize] = n as u32;
        }
        if seq {
            let t = list.pop().expect("one");
            f.submit(0.0, &t);
        } else {
            while let Some(t) = list.pop() {
                f.submit(0.0, &t);
            }
        }
    }
    let t0 = Instant::now();
    let (mut out, mut end, mut seen) = (Vec::new(), 0.0f64, 0usize);
    while let Some(t) = f.next_time() {
        f.advance(t, &mut out);
        end = t;
        for d in &out[seen..] {
            if let Some(next) = todo[src_of[d.id as usize] as usize].pop() {
                f.submit(t, &next);
            }
        }
        seen = out.len();
    }
    let secs = t0.elapsed().as_secs_f64();
    assert_eq!(out.len(), id as usize, "messages lost");
    let mut s = Vec::new();
    f.stats(end, &mut s);
    let get = |k: &str| s.iter().find(|x| x.0 == k).map_or(f64::NAN, |x| x.1);
    // Digests to check that a change of the model's implementation left every delivery
    // (time and per-message info) and every other statistic as it was.
    let deliveries = digest(out.iter().map(|d| {
        let i = &d.info;
        [
            u64::from(d.id),
            d.at.to_bits(),
            i.setup_ns.to_bits(),
            i.wait_ns.to_bits(),
            u64::from(i.blocked),
            u64::from(i.hops) << 8 | u64::from(i.path),
        ]
    }));
    // (reservations_blocked is printed on its own.)
    let stats = digest(
        s.iter()
            .filter(|x| x.0 != "reservations_blocked")
            .map(|(k, v)| [k.len() as u64, v.to_bits()]),
    );
    println!(
        "{side}^3 {per_node}/node {mode} every={every} buf={buffer}: {id} msgs in {secs:.2} s; \
         makespan {:.1} us; util {:.3}; segments {}; blocked {}; held {} {}; deliveries {deliveries:016x}; \
         stats {stats:016x}",
        end / 1e3,
        get("link_utilisation_mean"),
        get("segments"),
        get("reservations_blocked"),
        get("channels_held"),
        get("buffer_entries_held"),
    );
}

/// FNV-1a over the words of every item.
fn digest<const N: usize>(items: impl Iterator<Item = [u64; N]>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for words in items {
        for w in words {
            for b in w.to_le_bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    h
}
