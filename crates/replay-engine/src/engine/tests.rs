//! Event-loop semantics on tiny hand-made traces with hand-computed times.

use super::*;
use crate::config::{Arrivals, Generator, Pattern, Placement, ReplayOptions, Traffic};
use crate::error::ReplayError;
use crate::fabric::registry::FabricSpec;
use crate::fabric::schema::Value;
use crate::ops::Op;
use crate::trace::TraceColumns;

/// Owned columns of a test trace; rows are appended with `row`.
#[derive(Default, Clone)]
struct T {
    rank: Vec<u32>,
    seq: Vec<i64>,
    op: Vec<u8>,
    peer: Vec<i32>,
    root: Vec<i32>,
    send: Vec<i64>,
    recv: Vec<i64>,
    tag: Vec<i32>,
    comm: Vec<i32>,
    request: Vec<i64>,
    t0: Vec<i64>,
    t1: Vec<i64>,
    iteration: Vec<i32>,
    same: Vec<i32>,
}

impl T {
    /// Appends a row; its captured time is [t0, t0 + 1).
    #[allow(clippy::too_many_arguments)]
    fn row(
        mut self,
        rank: u32,
        op: Op,
        peer: i32,
        tag: i32,
        bytes: i64,
        request: i64,
        t0: i64,
    ) -> Self {
        self.seq
            .push(self.rank.iter().filter(|&&r| r == rank).count() as i64);
        self.rank.push(rank);
        self.op.push(op as u8);
        self.peer.push(peer);
        self.root.push(-1);
        self.send.push(bytes);
        self.recv.push(bytes);
        self.tag.push(tag);
        self.comm.push(0);
        self.request.push(request);
        self.t0.push(t0);
        self.t1.push(t0 + 1);
        self.iteration.push(-1);
        self.same.push(crate::trace::SAME);
        self
    }

    fn cols(&self) -> TraceColumns<'_> {
        TraceColumns {
            rank: &self.rank,
            seq: &self.seq,
            op: &self.op,
            peer: &self.peer,
            root: &self.root,
            send_bytes: &self.send,
            recv_bytes: &self.recv,
            tag: &self.tag,
            comm: &self.comm,
            request: &self.request,
            t_start_ns: &self.t0,
            t_end_ns: &self.t1,
            iteration: &self.iteration,
            recv_peer: &self.same,
            recv_tag: &self.same,
            dtype_bytes: &self.same,
            commutative: &self.same,
            requests: Default::default(),
            send_counts: Default::default(),
            recv_counts: Default::default(),
            comm_ids: &[],
            comm_members: Default::default(),
        }
    }
}

/// The contention-free α-β form (unlimited ports): the times below are α + nβ each.
fn alpha_beta() -> FabricSpec {
    FabricSpec::from_pairs([
        ("model", Value::from("alpha_beta")),
        ("alpha_us", Value::from(1.0)),
        ("beta_ns_per_byte", Value::from(1.0)),
        ("ports", Value::Int(0)),
    ])
    .unwrap()
}

fn loggp(o: f64) -> FabricSpec {
    FabricSpec::from_pairs([
        ("model", Value::from("loggp")),
        ("L_ns", Value::from(500.0)),
        ("o_ns", Value::from(o)),
    ])
    .unwrap()
}

fn crossbar(endpoints: u32) -> FabricSpec {
    FabricSpec::from_pairs([
        ("model", Value::from("flow")),
        ("link_bandwidth_gbps", Value::from(8.0)),
        ("hop_latency_ns", Value::from(10.0)),
        (
            "topology",
            Value::table([
                ("kind", Value::from("crossbar")),
                ("endpoints", Value::from(endpoints)),
            ]),
        ),
    ])
    .unwrap()
}

fn opts(scale: f64) -> ReplayOptions {
    ReplayOptions {
        compute_scale: scale,
        ..ReplayOptions::default()
    }
}

fn run(t: &T, spec: &FabricSpec, o: &ReplayOptions) -> Result<JobResult, ReplayError> {
    let job = JobInput {
        columns: t.cols(),
        placement: Placement::Linear { offset: 0 },
        foreground: true,
    };
    replay(&[job], Vec::new(), spec, o).map(|mut r| r.jobs.remove(0))
}

#[test]
fn ping_pong_costs_two_alpha_plus_n_beta() {
    let t = T::default()
        .row(0, Op::Send, 1, 0, 8, -1, 0)
        .row(0, Op::Recv, 1, 0, 8, -1, 2)
        .row(1, Op::Recv, 0, 0, 8, -1, 0)
        .row(1, Op::Send, 0, 0, 8, -1, 2);
    let r = run(&t, &alpha_beta(), &opts(0.0)).unwrap();
    assert_eq!(r.sim_end_ns, vec![0.0, 2016.0, 1008.0, 1008.0]);
    assert_eq!(r.total_time_ns, 2016.0);
}

#[test]
fn compute_gaps_are_scaled() {
    // Rank 1 computes 1000 ns (captured gap) before it sends.
    let t = T::default()
        .row(0, Op::Recv, 1, 0, 0, -1, 0)
        .row(1, Op::Init, -2, 0, 0, -1, 0)
        .row(1, Op::Send, 0, 0, 0, -1, 1001);
    assert_eq!(
        run(&t, &alpha_beta(), &opts(1.0)).unwrap().sim_end_ns[0],
        2000.0
    );
    assert_eq!(
        run(&t, &alpha_beta(), &opts(0.5)).unwrap().sim_end_ns[0],
        1500.0
    );
    assert_eq!(
        run(&t, &alpha_beta(), &opts(0.0)).unwrap().sim_end_ns[0],
        1000.0
    );
}

#[test]
fn messages_match_in_order_per_source_and_tag() {
    // Rank 0 sends 100 B (tag 1) then 300 B (tag 2). Rank 1 first receives tag 2, then ANY_TAG.
    let t = T::default()
        .row(0, Op::Send, 1, 1, 100, -1, 0)
        .row(0, Op::Send, 1, 2, 300, -1, 2)
        .row(1, Op::Recv, 0, 2, 300, -1, 0)
        .row(1, Op::Recv, 0, -1, 100, -1, 2);
    let r = run(&t, &alpha_beta(), &opts(0.0)).unwrap();
    assert_eq!(r.sim_end_ns[2], 1300.0); // the tag-2 message
    assert_eq!(r.sim_end_ns[3], 1300.0); // tag 1 had arrived at 1100 already
                                         // ANY_TAG takes the first message sent, not the largest or last.
    let t = T::default()
        .row(0, Op::Send, 1, 1, 100, -1, 0)
        .row(0, Op::Send, 1, 2, 300, -1, 2)
        .row(1, Op::Recv, 0, -1, 0, -1, 0)
        .row(1, Op::Recv, 0, -1, 0, -1, 2);
    let r = run(&t, &alpha_beta(), &opts(0.0)).unwrap();
    assert_eq!((r.sim_end_ns[2], r.sim_end_ns[3]), (1100.0, 1300.0));
}

#[test]
fn any_source_takes_the_earliest_sender() {
    // Rank 2 sends at 0, rank 1 after a 5000 ns gap; rank 0 receives twice from ANY_SOURCE.
    let t = T::default()
        .row(0, Op::Recv, -1, 0, 8, -1, 0)
        .row(0, Op::Recv, -1, 0, 8, -1, 2)
        .row(1, Op::Init, -2, 0, 0, -1, 0)
        .row(1, Op::Send, 0, 0, 16, -1, 5001)
        .row(2, Op::Send, 0, 0, 8, -1, 0);
    let r = run(&t, &alpha_beta(), &opts(1.0)).unwrap();
    assert_eq!(r.sim_end_ns[0], 1008.0);
    assert_eq!(r.sim_end_ns[1], 5000.0 + 1016.0);
}

#[test]
fn eager_sends_return_at_once_rendezvous_waits_for_the_receiver() {
    // Receiver computes 10 µs before posting. LogGP: L = 500, o = 100.
    let trace = |bytes| {
        T::default()
            .row(0, Op::Send, 1, 0, bytes, -1, 0)
            .row(1, Op::Init, -2, 0, 0, -1, 0)
            .row(1, Op::Recv, 0, 0, bytes, -1, 10_001)
    };
    // The host model's threshold (fabric/host.rs): at most this many bytes go eagerly.
    let limit = loggp(100.0).host().eager_threshold_bytes as i64;
    let eager = run(&trace(limit), &loggp(100.0), &opts(1.0)).unwrap();
    assert_eq!(eager.sim_end_ns[0], 100.0); // o
    assert_eq!(eager.sim_end_ns[2], 10_000.0 + 100.0); // data long arrived: o to copy
    let rndv = run(&trace(limit + 1), &loggp(100.0), &opts(1.0)).unwrap();
    // RTS arrived at 700; recv posted at 10 000; CTS o + L + o; data L; receiver o.
    assert_eq!(rndv.sim_end_ns[0], 10_000.0 + 700.0 + 500.0);
    assert_eq!(rndv.sim_end_ns[2], 10_000.0 + 700.0 + 500.0 + 100.0);
    // A lower threshold makes the small message rendezvous too (G = 0: times do not depend
    // on the size): the replay's override...
    let o = ReplayOptions {
        eager_threshold_bytes: Some(1024),
        ..opts(1.0)
    };
    let lowered = run(&trace(limit), &loggp(100.0), &o).unwrap();
    assert_eq!(lowered.sim_end_ns, rndv.sim_end_ns);
    // ...or the fabric file's [host] table, which the override beats in turn.
    let lower = FabricSpec::from_pairs([
        ("model", Value::from("loggp")),
        ("L_ns", Value::from(500.0)),
        (
            "host",
            Value::table([
                ("overhead_ns", Value::from(100.0)),
                ("eager_threshold_bytes", Value::Int(1024)),
            ]),
        ),
    ])
    .unwrap();
    let lowered = run(&trace(limit), &lower, &opts(1.0)).unwrap();
    assert_eq!(lowered.sim_end_ns, rndv.sim_end_ns);
    let back = ReplayOptions {
        eager_threshold_bytes: Some(limit as u64),
        ..opts(1.0)
    };
    assert_eq!(run(&trace(limit), &lower, &back).unwrap(), eager);
}

#[test]
fn nonblocking_waitall_waitany_and_test() {
    // Rank 0: irecv from 1 (req 7) and 2 (req 8), test, waitany (-1), waitall (-1).
    // Rank 1 sends 8 B at once; rank 2 sends 8 B after 3000 ns.
    let t = T::default()
        .row(0, Op::Irecv, 1, 0, 8, 7, 0)
        .row(0, Op::Irecv, 2, 0, 8, 8, 1)
        .row(0, Op::Test, -2, 0, 0, -1, 2)
        .row(0, Op::Waitany, -2, 0, 0, -1, 3)
        .row(0, Op::Waitall, -2, 0, 0, -1, 4)
        .row(1, Op::Isend, 0, 0, 8, 1, 0)
        .row(1, Op::Wait, -2, 0, 0, 1, 1)
        .row(2, Op::Init, -2, 0, 0, -1, 0)
        .row(2, Op::Send, 0, 0, 8, -1, 3001);
    let r = run(&t, &alpha_beta(), &opts(0.0)).unwrap();
    assert_eq!(
        r.sim_end_ns[2], 0.0,
        "a test that completed nothing returns at once"
    );
    assert_eq!(
        r.sim_end_ns[3], 1008.0,
        "waitany ends with the first arrival"
    );
    assert_eq!(
        r.sim_end_ns[4], 1008.0,
        "rank 2 sends at 0 with compute_scale 0"
    );
    let r = run(&t, &alpha_beta(), &opts(1.0)).unwrap();
    assert_eq!(
        r.sim_end_ns[4],
        3000.0 + 1008.0,
        "waitall waits for the late sender"
    );
}

#[test]
fn deadlock_names_the_blocked_ranks_and_their_operations() {
    let t = T::default()
        .row(0, Op::Recv, 1, 5, 8, -1, 0)
        .row(0, Op::Send, 1, 5, 8, -1, 2)
        .row(1, Op::Recv, 0, 5, 8, -1, 0)
        .row(1, Op::Send, 0, 5, 8, -1, 2);
    let err = run(&t, &alpha_beta(), &opts(1.0)).unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(
            err,
            ReplayError::Deadlock {
                total_blocked: 2,
                ..
            }
        ),
        "{text}"
    );
    assert!(
        text.contains("rank 0 at row 0 waiting for recv (seq 0, peer 1, tag 5"),
        "{text}"
    );
    assert!(text.contains("rank 1 at row 2"), "{text}");
}

#[test]
fn unmatched_send_is_an_error() {
    let t = T::default()
        .row(0, Op::Send, 1, 3, 8, -1, 0)
        .row(1, Op::Init, -2, 0, 0, -1, 0);
    let text = run(&t, &alpha_beta(), &opts(1.0)).unwrap_err().to_string();
    assert!(
        text.contains("send never received: trace 0 rank 0 -> rank 1, tag 3"),
        "{text}"
    );
}

fn ring_trace(ranks: u32, rounds: u32, bytes: i64) -> T {
    let mut t = T::default();
    for round in 0..rounds {
        for r in 0..ranks {
            let right = ((r + 1) % ranks) as i32;
            let left = ((r + ranks - 1) % ranks) as i32;
            let at = i64::from(round) * 100;
            t = t
                .row(r, Op::Irecv, left, 0, bytes, 1, at)
                .row(r, Op::Isend, right, 0, bytes, 2, at + 10)
                .row(r, Op::Waitall, -2, 0, 0, -1, at + 20);
        }
    }
    t
}

#[test]
fn replays_are_bit_identical_and_flows_contend() {
    let t = ring_trace(8, 5, 100_000);
    let spec = crossbar(4); // 2 ranks per endpoint: half the ring's flows leave a node
    let a = run(&t, &spec, &opts(1.0)).unwrap();
    let b = run(&t, &spec, &opts(1.0)).unwrap();
    assert_eq!(a, b);
    assert!(a
        .sim_end_ns
        .iter()
        .zip(&b.sim_end_ns)
        .all(|(x, y)| x.to_bits() == y.to_bits()));
    // One flow per up-link: 100 kB at 1 B/ns + 2 hops per round for rendezvous data.
    assert!(a.total_time_ns >= 5.0 * 100_020.0, "{}", a.total_time_ns);
}

#[test]
fn two_traces_share_one_fabric() {
    // Both traces put their sender on endpoint 0 and receiver on endpoint 1: the shared
    // up-link halves each flow's rate (1 B/ns → 0.5 B/ns). The data leaves after the
    // rendezvous handshake, RTS and CTS each 2 hops of 10 ns.
    let t =
        T::default()
            .row(0, Op::Send, 1, 0, 100_000, -1, 0)
            .row(1, Op::Recv, 0, 0, 100_000, -1, 0);
    let spec = crossbar(4);
    let place = || Placement::Explicit(vec![0, 1]);
    let jobs = [
        JobInput {
            columns: t.cols(),
            placement: place(),
            foreground: true,
        },
        JobInput {
            columns: t.cols(),
            placement: place(),
            foreground: true,
        },
    ];
    let out = replay(&jobs, Vec::new(), &spec, &opts(1.0)).unwrap();
    let res = &out.jobs;
    assert_eq!(res[0].sim_end_ns[1], 40.0 + 200_000.0 + 20.0);
    assert_eq!(res[1].sim_end_ns[1], 40.0 + 200_000.0 + 20.0);
    assert_eq!(out.stats.actions, 4);
    let alone = run(&t, &spec, &opts(1.0)).unwrap();
    assert_eq!(alone.sim_end_ns[1], 40.0 + 100_000.0 + 20.0);
}

#[test]
fn iteration_latency_is_the_longest_rank_span() {
    let mut t = T::default()
        .row(0, Op::Send, 1, 0, 8, -1, 0)
        .row(1, Op::Recv, 0, 0, 8, -1, 0)
        .row(0, Op::Send, 1, 0, 8, -1, 2)
        .row(1, Op::Recv, 0, 0, 8, -1, 2);
    t.iteration = vec![0, 0, 1, 1];
    let r = run(&t, &alpha_beta(), &opts(0.0)).unwrap();
    assert_eq!(r.iterations, vec![0, 1]);
    // Eager pipelining: the second message left at 0 and had arrived when rank 1 asked for it.
    assert_eq!(r.iteration_latency_ns, vec![1008.0, 0.0]);
    // The mean over ranks of each rank's own span: the sender's eager send took 0.
    assert_eq!(r.iteration_mean_ns, vec![504.0, 0.0]);
}

#[test]
fn iteration_ids_that_go_back_keep_their_spans_open() {
    // One rank, compute rows at captured starts 0, 1, 3, 6, 10, 15, 21 (1 ns each, replayed
    // at scale 1: the same times), iterations 0 0 2 1 1 2 3. Iteration 2 stays open while
    // the rank goes back to 1, so its span runs from row 2's start (3) to row 5's end (16).
    let mut t = T::default();
    for t0 in [0, 1, 3, 6, 10, 15, 21] {
        t = t.row(0, Op::Compute, -2, 0, 0, -1, t0);
    }
    t.iteration = vec![0, 0, 2, 1, 1, 2, 3];
    let r = run(&t, &alpha_beta(), &opts(1.0)).unwrap();
    assert_eq!(r.sim_end_ns, vec![1.0, 2.0, 4.0, 7.0, 11.0, 16.0, 22.0]);
    assert_eq!(r.iterations, vec![0, 1, 2, 3]);
    assert_eq!(r.iteration_latency_ns, vec![2.0, 5.0, 13.0, 1.0]);
}

/// A foreground trace that computes for `ns` on rank 0 (the replay's length).
fn compute_for(ns: i64) -> T {
    let mut t = T::default().row(0, Op::Compute, -2, 0, 0, -1, 0);
    t.t1[0] = ns;
    t
}

fn generator(pattern: Pattern, endpoints: Vec<u32>, load: f64) -> Generator {
    Generator {
        traffic: Traffic {
            pattern,
            bytes: 4096,
            load,
            arrivals: Arrivals::Poisson,
        },
        endpoints,
    }
}

#[test]
fn background_offered_load_matches_the_request_on_a_crossbar() {
    let t = compute_for(20_000_000); // 20 ms
    let spec = crossbar(16);
    for (pattern, load) in [
        (Pattern::Uniform, 0.5),
        (Pattern::AllToAll, 0.3),
        (Pattern::Permutation, 0.8),
        (Pattern::NearestNeighbour, 0.2),
        (Pattern::HotSpot { fraction: 0.1 }, 0.4),
    ] {
        let job = JobInput {
            columns: t.cols(),
            placement: Placement::Explicit(vec![0]),
            foreground: true,
        };
        let gens = vec![generator(pattern, (1..16).collect(), load)];
        let out = replay(&[job], gens, &spec, &opts(1.0)).unwrap();
        assert_eq!(out.jobs[0].total_time_ns, 20_000_000.0);
        let get = |k: &str| {
            out.fabric_stats
                .iter()
                .find(|s| s.0 == k)
                .unwrap_or_else(|| panic!("{k}: {:?}", out.fabric_stats))
                .1
        };
        let offered = get("background_offered_load");
        // 15 nodes × 1 B/ns × 20 ms / 4 KiB ≈ 36 K messages per unit of load.
        assert!(
            (offered / load - 1.0).abs() < 0.02,
            "{pattern:?}: {offered}"
        );
        // Below saturation (hot spot: 0.1 × 14/15 × load + the uniform share into node 0
        // stays < 1) the crossbar delivers what is offered, but for messages in flight.
        let delivered = get("background_delivered_load");
        assert!(
            (delivered / offered - 1.0).abs() < 0.01,
            "{pattern:?}: {delivered}"
        );
    }
}

#[test]
fn background_load_zero_leaves_the_replay_bit_identical() {
    let t = ring_trace(8, 5, 100_000);
    let spec = crossbar(16);
    let alone = run(&t, &spec, &opts(1.0)).unwrap();
    let job = JobInput {
        columns: t.cols(),
        placement: Placement::Linear { offset: 0 },
        foreground: true,
    };
    let gens = vec![generator(Pattern::Uniform, (8..16).collect(), 0.0)];
    let out = replay(&[job], gens, &spec, &opts(1.0)).unwrap();
    assert_eq!(out.jobs[0], alone);
    assert_eq!(out.stats.background_messages, 0);
}

#[test]
fn background_traffic_on_shared_links_slows_the_foreground_and_is_cut_off_at_its_end() {
    let t = ring_trace(8, 5, 100_000);
    let spec = crossbar(16);
    let alone = run(&t, &spec, &opts(1.0)).unwrap();
    let job = |placement| JobInput {
        columns: t.cols(),
        placement,
        foreground: true,
    };
    // Generators whose destinations include the foreground's endpoints 0..7.
    let gens = vec![generator(Pattern::Uniform, (0..16).collect(), 0.6)];
    let loaded = replay(
        &[job(Placement::Linear { offset: 0 })],
        gens,
        &spec,
        &opts(1.0),
    )
    .unwrap();
    assert!(loaded.jobs[0].total_time_ns > 1.2 * alone.total_time_ns);
    assert!(loaded.stats.background_messages > 0);
    // A background trace (the same ring, elsewhere) is cut off when the foreground ends.
    let long = ring_trace(8, 50, 100_000);
    let bg = JobInput {
        columns: long.cols(),
        placement: Placement::Linear { offset: 8 },
        foreground: false,
    };
    let out = replay(
        &[job(Placement::Linear { offset: 0 }), bg],
        vec![],
        &spec,
        &opts(1.0),
    )
    .unwrap();
    assert_eq!(out.jobs[0].total_time_ns, alone.total_time_ns); // disjoint links
    assert_eq!(out.jobs[1].unfinished_ranks, 8);
    assert_eq!(out.jobs[0].unfinished_ranks, 0);
}

/// The α-β fabric of `alpha_beta` with host noise `noise` (a `[host.noise]` table).
fn alpha_beta_noisy(noise: &[(&str, Value)]) -> FabricSpec {
    FabricSpec::from_pairs([
        ("model", Value::from("alpha_beta")),
        ("alpha_us", Value::from(1.0)),
        ("beta_ns_per_byte", Value::from(1.0)),
        ("ports", Value::Int(0)),
        (
            "host",
            Value::table([("noise", Value::table(noise.to_vec()))]),
        ),
    ])
    .unwrap()
}

fn poisson_noise(rate_per_s: f64, length_ns: f64) -> Vec<(&'static str, Value)> {
    vec![
        ("kind", Value::from("poisson")),
        ("rate_per_s", Value::from(rate_per_s)),
        ("length_ns", Value::from(length_ns)),
    ]
}

fn bits(r: &JobResult) -> Vec<u64> {
    let times = r.sim_start_ns.iter().chain(&r.sim_end_ns);
    times.map(|t| t.to_bits()).collect()
}

#[test]
fn host_noise_none_leaves_the_replay_bit_identical() {
    let t = ring_trace(8, 5, 100);
    let plain = run(&t, &alpha_beta(), &opts(1.0)).unwrap();
    let none = run(
        &t,
        &alpha_beta_noisy(&[("kind", "none".into())]),
        &opts(1.0),
    )
    .unwrap();
    assert_eq!(bits(&plain), bits(&none));
    assert_eq!(plain, none);
}

#[test]
fn host_noise_is_deterministic_per_seed() {
    let t = ring_trace(8, 50, 100);
    // 20 detours of 5 µs per ms of run time: most of the 50 rounds meet some.
    let spec = alpha_beta_noisy(&poisson_noise(20_000.0, 5000.0));
    let seeded = |seed| {
        let o = ReplayOptions { seed, ..opts(1.0) };
        run(&t, &spec, &o).unwrap()
    };
    let (a, b, c) = (seeded(1), seeded(1), seeded(2));
    assert_eq!(bits(&a), bits(&b));
    assert_ne!(bits(&a), bits(&c));
    let quiet = run(&t, &alpha_beta(), &opts(1.0)).unwrap();
    assert!(a.total_time_ns > quiet.total_time_ns);
}

/// One rank computing `runs` intervals of W ns back to back, one iteration each, under
/// Poisson detours of constant length d: each iteration's latency is W plus the lengths of
/// Poisson(λW) detours. Over n = 20 000 iterations the mean stretch 1 + λd has a standard
/// error sqrt(λW)·d/W/sqrt(n) = 0.00075 (λW = 0.5, d/W = 0.15); the tolerances are 4
/// standard errors.
#[test]
fn a_compute_loop_under_poisson_noise_has_the_analytic_latencies() {
    let (w, d, runs) = (2000i64, 300.0, 20_000usize);
    let mut t = T::default();
    for i in 0..runs as i64 {
        t = t.row(0, Op::Compute, -2, 0, 0, -1, i * w);
    }
    t.t1 = t.t0.iter().map(|t0| t0 + w).collect();
    t.iteration = (0..runs as i32).collect();
    let rate_per_s = 250_000.0; // λ = 2.5e-4 per ns: λW = 0.5
    let r = run(
        &t,
        &alpha_beta_noisy(&poisson_noise(rate_per_s, d)),
        &opts(1.0),
    )
    .unwrap();
    let lat = &r.iteration_latency_ns;
    assert_eq!(lat.len(), runs);
    let w = w as f64;
    let lambda_w = rate_per_s / 1e9 * w;
    let mean = lat.iter().sum::<f64>() / runs as f64 / w;
    let expect = 1.0 + lambda_w * d / w;
    assert!((mean - expect).abs() < 4.0 * 0.00075, "{mean} vs {expect}");
    // P(k detours) = e^-λW (λW)^k / k!: latency W + k·d. Standard errors sqrt(p(1-p)/n):
    // 0.0035 (k = 0, p = 0.61), 0.0034 (k = 1, p = 0.30), 0.0020 (k = 2, p = 0.076).
    let mut pmf = (-lambda_w).exp();
    for (k, se) in [(0, 0.0035), (1, 0.0034), (2, 0.0020)] {
        if k > 0 {
            pmf *= lambda_w / f64::from(k);
        }
        let stretched = w + f64::from(k) * d;
        let share = lat
            .iter()
            .filter(|&&l| (l - stretched).abs() < 1e-6)
            .count() as f64;
        let share = share / runs as f64;
        assert!((share - pmf).abs() < 4.0 * se, "k = {k}: {share} vs {pmf}");
    }
    // One rank: the mean over ranks is its own span.
    assert_eq!(r.iteration_mean_ns, r.iteration_latency_ns);
}

/// A rank that waited comes back when a detour in progress at its message's arrival ends
/// (`during_waits`). Rank 1 waits ~1 ms for each message of rank 0, many detour cycles
/// (1/λ + d = 12 µs), so at the arrival it is away with the stationary probability
/// λd / (1 + λd) = 1/6 and, constant lengths d = 2 µs, then for U(0, d): mean d/2. Over
/// n = 2000 messages the standard errors are sqrt(p(1-p)/n) = 0.0083 and
/// d/sqrt(12·n·p) ≈ 56 ns; the tolerances are 4 of them.
#[test]
fn a_rank_back_from_a_wait_waits_out_the_detour_in_progress() {
    let (w, runs) = (1_000_000i64, 2000i64);
    let mut t = T::default();
    for k in 0..runs {
        let at = k * (w + 10);
        t = t.row(0, Op::Compute, -2, 0, 0, -1, at);
        t = t.row(0, Op::Send, 1, 0, 8, -1, at + w);
        t = t.row(1, Op::Recv, 0, 0, 8, -1, k); // back to back: no compute between
    }
    for (i, op) in t.op.iter().enumerate() {
        if *op == Op::Compute as u8 {
            t.t1[i] = t.t0[i] + w;
        }
    }
    let d = 2000.0;
    let spec = alpha_beta_noisy(&poisson_noise(100_000.0, d)); // λd = 0.2
    let r = run(&t, &spec, &opts(1.0)).unwrap();
    let send_ends = (0..t.op.len()).filter(|&i| t.op[i] == Op::Send as u8);
    let recv_ends = (0..t.op.len()).filter(|&i| t.op[i] == Op::Recv as u8);
    let waited: Vec<f64> = send_ends
        .zip(recv_ends)
        .map(|(s, v)| r.sim_end_ns[v] - (r.sim_end_ns[s] + 1008.0))
        .collect();
    assert!(waited.iter().all(|&x| (-1e-6..=d + 1e-6).contains(&x)));
    let away: Vec<f64> = waited.into_iter().filter(|&x| x > 0.0).collect();
    let p = away.len() as f64 / runs as f64;
    assert!((p - 1.0 / 6.0).abs() < 4.0 * 0.0083, "{p}");
    let mean = away.iter().sum::<f64>() / away.len() as f64;
    assert!((mean - d / 2.0).abs() < 4.0 * 56.0, "{mean}");
    // during_waits = false: detours only stretch CPU work, and rank 1 does none.
    let mut cpu_only = poisson_noise(100_000.0, d);
    cpu_only.push(("during_waits", Value::from(false)));
    let r = run(&t, &alpha_beta_noisy(&cpu_only), &opts(1.0)).unwrap();
    let sends = (0..t.op.len()).filter(|&i| t.op[i] == Op::Send as u8);
    let recvs = (0..t.op.len()).filter(|&i| t.op[i] == Op::Recv as u8);
    assert!(sends
        .zip(recvs)
        .all(|(s, v)| r.sim_end_ns[v] == r.sim_end_ns[s] + 1008.0));
}

/// LogGP with L = 500 ns and o = 100 ns in the `[host]` table, overheads occupying the CPU
/// or not.
fn loggp_occupying(occupy: bool) -> FabricSpec {
    FabricSpec::from_pairs([
        ("model", Value::from("loggp")),
        ("L_ns", Value::from(500.0)),
        (
            "host",
            Value::table([
                ("overhead_ns", Value::from(100.0)),
                ("overheads_occupy_cpu", Value::Bool(occupy)),
            ]),
        ),
    ])
    .unwrap()
}

#[test]
fn receive_overheads_occupy_the_receivers_cpu_one_after_another() {
    // Three ranks send 8 B to rank 0 at once; each arrives at o + L = 600 ns.
    let mut t = T::default();
    for peer in 1..=3 {
        t = t.row(0, Op::Irecv, peer, 0, 8, i64::from(peer), i64::from(peer));
    }
    t = t.row(0, Op::Waitall, -2, 0, 0, -1, 4);
    for peer in 1..=3u32 {
        t = t.row(peer, Op::Send, 0, 0, 8, -1, 0);
    }
    let apart = run(&t, &loggp_occupying(false), &opts(0.0)).unwrap();
    assert_eq!(apart.sim_end_ns[3], 700.0, "every receive's o at once");
    let occupied = run(&t, &loggp_occupying(true), &opts(0.0)).unwrap();
    assert_eq!(occupied.sim_end_ns[3], 900.0, "o after o on rank 0's CPU");
    assert_eq!(
        occupied.sim_end_ns[4..],
        apart.sim_end_ns[4..],
        "senders unchanged"
    );
}

#[test]
fn a_send_at_the_present_runs_before_a_receive_overhead_reserved_ahead() {
    // Rank 1's message reaches rank 0 at 600 ns; the LogGP fabric tells the engine so when
    // it leaves (100 ns), and rank 0's o for it is reserved then for [600, 700). Rank 0
    // computes until 200 ns and isends: its o takes [200, 300), the gap before the
    // reservation, not the CPU after it.
    let t = T::default()
        .row(0, Op::Irecv, 1, 0, 8, 1, 0)
        .row(0, Op::Isend, 2, 0, 8, 2, 201)
        .row(0, Op::Waitall, -2, 0, 0, -1, 202)
        .row(1, Op::Send, 0, 0, 8, -1, 0)
        .row(2, Op::Recv, 0, 0, 8, -1, 0);
    for occupy in [false, true] {
        let r = run(&t, &loggp_occupying(occupy), &opts(1.0)).unwrap();
        assert_eq!(r.sim_end_ns[1], 300.0, "occupy {occupy}");
        assert_eq!(r.sim_end_ns[2], 700.0, "occupy {occupy}");
    }
}
