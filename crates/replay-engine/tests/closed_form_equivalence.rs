//! Closed-form collectives (engine/plan/) give bit-identical times to the event-driven
//! path: random collective sequences with skewed entry times, several algorithms, eager
//! and rendezvous sizes, host overheads and reduction costs, on the α-β fabric.

use replay_engine::fabric::schema::Value;
use replay_engine::ops::Op;
use replay_engine::prng::SplitMix64;
use replay_engine::TraceColumns;
use replay_engine::{replay, FabricSpec, JobInput, Placement, ReplayOptions};

struct Trace {
    rank: Vec<u32>,
    seq: Vec<i64>,
    op: Vec<u8>,
    peer: Vec<i32>,
    root: Vec<i32>,
    bytes: Vec<i64>,
    zero: Vec<i32>,
    request: Vec<i64>,
    t0: Vec<i64>,
    t1: Vec<i64>,
    iteration: Vec<i32>,
}

/// `calls` collectives on `p` ranks; every rank computes a random time before each call.
fn trace(p: u32, calls: &[(Op, i64)], seed: u64) -> Trace {
    let mut rng = SplitMix64::new(seed);
    let mut t = Trace {
        rank: vec![],
        seq: vec![],
        op: vec![],
        peer: vec![],
        root: vec![],
        bytes: vec![],
        zero: vec![],
        request: vec![],
        t0: vec![],
        t1: vec![],
        iteration: vec![],
    };
    for r in 0..p {
        let mut clock = 0i64;
        for (i, &(op, bytes)) in calls.iter().enumerate() {
            clock += rng.below(5000) as i64;
            t.rank.push(r);
            t.seq.push(i as i64);
            t.op.push(op as u8);
            t.peer.push(-2);
            t.root.push(if matches!(op, Op::Reduce | Op::Bcast) {
                1
            } else {
                -1
            });
            t.bytes.push(bytes);
            t.zero.push(0);
            t.request.push(-1);
            t.t0.push(clock);
            t.t1.push(clock);
            t.iteration.push(i as i32);
        }
    }
    t
}

/// Host costs as (o ns, O ns/B, γ ns/B).
type Host = (f64, f64, f64);

fn run(t: &Trace, coll: &str, closed: bool, host: Host) -> (Vec<f64>, Vec<f64>, u64) {
    let columns = TraceColumns {
        rank: &t.rank,
        seq: &t.seq,
        op: &t.op,
        peer: &t.peer,
        root: &t.root,
        send_bytes: &t.bytes,
        recv_bytes: &t.bytes,
        tag: &t.zero,
        comm: &t.zero,
        request: &t.request,
        t_start_ns: &t.t0,
        t_end_ns: &t.t1,
        iteration: &t.iteration,
        ..TraceColumns::default()
    };
    let spec = FabricSpec::from_pairs([
        ("model", Value::from("alpha_beta")),
        ("alpha_us", Value::from(1.0)),
        ("beta_ns_per_byte", Value::from(0.1)),
        ("overhead_ns", Value::from(host.0)),
        ("overhead_ns_per_byte", Value::from(host.1)),
        ("gamma_ns_per_byte", Value::from(host.2)),
    ])
    .expect("spec");
    let options = ReplayOptions {
        coll_overrides: coll.into(),
        closed_form_collectives: closed,
        ..ReplayOptions::default()
    };
    let jobs = [JobInput {
        columns,
        placement: Placement::Linear { offset: 0 },
        foreground: true,
    }];
    let out = replay(&jobs, Vec::new(), &spec, &options).expect("replay");
    let r = out.jobs.into_iter().next().unwrap();
    (r.sim_start_ns, r.sim_end_ns, out.stats.messages)
}

#[test]
fn closed_form_collectives_are_bit_identical_to_the_event_driven_path() {
    let calls = [
        (Op::Allreduce, 8),
        (Op::Barrier, 0),
        (Op::Allreduce, 1 << 20),
        (Op::Allgather, 64),
        (Op::Alltoall, 16384),
        (Op::Bcast, 8),
        (Op::Reduce, 100_000),
        (Op::Allreduce, 30_000),
        (Op::ReduceScatterBlock, 4096),
        (Op::Allgather, 20_000),
    ];
    let hosts = [(0.0, 0.0, 0.0), (300.0, 0.01, 0.05)];
    let overrides = [
        "",
        "allreduce=ring,allgather=bruck,alltoall=pairwise",
        "allreduce=rabenseifner,allgather=recursive_doubling,alltoall=bruck,barrier=bruck",
        "allreduce=recursive_doubling,allgather=neighbor_exchange,barrier=double_ring",
    ];
    for p in [2u32, 5, 8, 16, 24] {
        let t = trace(p, &calls, u64::from(p));
        for host in hosts {
            for coll in overrides {
                let event = run(&t, coll, false, host);
                let closed = run(&t, coll, true, host);
                assert!(
                    event
                        .0
                        .iter()
                        .zip(&closed.0)
                        .all(|(a, b)| a.to_bits() == b.to_bits())
                        && event
                            .1
                            .iter()
                            .zip(&closed.1)
                            .all(|(a, b)| a.to_bits() == b.to_bits()),
                    "p={p} coll={coll:?} host={host:?}"
                );
                assert_eq!(event.2, closed.2, "message counts");
            }
        }
    }
}
