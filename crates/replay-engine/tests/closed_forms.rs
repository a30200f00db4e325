//! Closed forms of Thakur, Rabenseifner & Gropp, "Optimization of Collective Communication
//! Operations in MPICH", IJHPCA 19(1), 2005, checked against the Open MPI 4.1 schedules of
//! `replay_engine::collectives` played by a small lockstep α-β-γ evaluator (a message of n
//! bytes costs α + nβ and is eager; the sends and receives of a step overlap; a step ends
//! when its sends are out and its receives have arrived, then γ per reduced byte is spent).
//! p = 16, α = 1 µs, β = 1 ns/B, γ = 0.5 ns/B, sizes 8 B and 1 MiB, OSU's size convention.

use std::collections::{HashMap, VecDeque};

use replay_engine::collectives::{allreduce, schedule, Algo, AlgoParams, CollKind, CollSpec, Step};

const ALPHA: f64 = 1000.0;
const BETA: f64 = 1.0;
const GAMMA: f64 = 0.5;
const P: u32 = 16;
const LG_P: f64 = 4.0;
const MIB: u64 = 1 << 20;

/// Completion time (ns) of the slowest rank when every rank starts at 0.
fn play(all: &[Vec<Step>]) -> f64 {
    let p = all.len();
    let mut chan: HashMap<(u32, u32), VecDeque<(u64, f64)>> = HashMap::new();
    let (mut pos, mut posted) = (vec![0usize; p], vec![None::<f64>; p]);
    let mut t = vec![0.0f64; p];
    loop {
        let mut progress = false;
        for r in 0..p {
            let Some(step) = all[r].get(pos[r]) else {
                continue;
            };
            let start = t[r];
            if posted[r].is_none() {
                let mut end = start;
                for &(to, b) in &step.sends {
                    let arrive = start + ALPHA + b as f64 * BETA;
                    chan.entry((r as u32, to))
                        .or_default()
                        .push_back((b, arrive));
                    end = end.max(arrive);
                }
                posted[r] = Some(end);
                progress = true;
            }
            let mut need: HashMap<u32, usize> = HashMap::new();
            for &(from, _) in &step.recvs {
                *need.entry(from).or_default() += 1;
            }
            let ready = need
                .iter()
                .all(|(&f, &n)| chan.get(&(f, r as u32)).is_some_and(|q| q.len() >= n));
            if ready {
                let mut end = posted[r].take().unwrap_or(start);
                for &(from, b) in &step.recvs {
                    let (got, arrive) = chan
                        .get_mut(&(from, r as u32))
                        .unwrap()
                        .pop_front()
                        .unwrap();
                    assert_eq!(got, b, "size mismatch {from}->{r}");
                    end = end.max(arrive);
                }
                t[r] = end + step.reduce_bytes as f64 * GAMMA;
                pos[r] += 1;
                progress = true;
            }
        }
        if !progress {
            break;
        }
    }
    assert!(
        (0..p).all(|r| pos[r] == all[r].len()),
        "schedule did not complete"
    );
    t.iter().copied().fold(0.0, f64::max)
}

fn run(kind: CollKind, algo: Algo, bytes: u64) -> f64 {
    let spec = CollSpec::new(kind, P, 0, bytes);
    let all: Vec<Vec<Step>> = (0..P)
        .map(|me| schedule(&spec, algo, &AlgoParams::default(), me).unwrap())
        .collect();
    play(&all)
}

fn assert_close(what: &str, got: f64, want: f64) {
    let rel = (got - want).abs() / want;
    println!(
        "{what}: simulated {got:.1} ns, formula {want:.1} ns, diff {:.4} %",
        rel * 100.0
    );
    assert!(
        rel <= 0.01,
        "{what}: simulated {got} ns vs formula {want} ns ({:.3} %)",
        rel * 100.0
    );
}

/// (p-1)/p * n
fn frac(n: u64) -> f64 {
    (P as f64 - 1.0) / P as f64 * n as f64
}

#[test]
fn binomial_bcast_is_lg_p_hops() {
    // ⌈lg p⌉(α + nβ): Open MPI's root isends to all children at once (children nearest
    // first), the depth of the binomial tree is lg p.
    for n in [8, MIB] {
        let want = LG_P * (ALPHA + n as f64 * BETA);
        assert_close(
            &format!("bcast binomial n={n}"),
            run(CollKind::Bcast, Algo::Binomial, n),
            want,
        );
    }
}

#[test]
fn ring_allreduce() {
    // 2(p−1)α + 2((p−1)/p)nβ + ((p−1)/p)nγ at 1 MiB (count >= p).
    let n = MIB;
    let want = 2.0 * 15.0 * ALPHA + 2.0 * frac(n) * BETA + frac(n) * GAMMA;
    assert_close(
        "allreduce ring 1MiB",
        run(CollKind::Allreduce, Algo::Ring, n),
        want,
    );
    // At 8 B (count 8 < p 16) Open MPI's ring falls back to recursive doubling
    // (allreduce_intra_ring: "if (count < size) ... recursivedoubling"), so the forced ring
    // costs lg p (α + nβ + nγ), not the ring formula.
    let rd = LG_P * (ALPHA + 8.0 * (BETA + GAMMA));
    assert_close(
        "allreduce ring 8B (OMPI: RD)",
        run(CollKind::Allreduce, Algo::Ring, 8),
        rd,
    );
    // The ring itself (no fallback: 8 one-byte blocks and 8 empty ones) follows the paper.
    let all: Vec<Vec<Step>> = (0..P).map(|me| allreduce::ring(P, me, 8, 1)).collect();
    let want = 2.0 * 15.0 * ALPHA + 2.0 * frac(8) * BETA + frac(8) * GAMMA;
    assert_close("allreduce pure ring 8B", play(&all), want);
}

#[test]
fn recursive_doubling_allreduce() {
    // lg p (α + nβ + nγ)
    for n in [8, MIB] {
        let want = LG_P * (ALPHA + n as f64 * (BETA + GAMMA));
        let got = run(CollKind::Allreduce, Algo::RecursiveDoubling, n);
        assert_close(&format!("allreduce recursive doubling n={n}"), got, want);
    }
}

#[test]
fn rabenseifner_allreduce() {
    // 2 lg p α + 2((p−1)/p)nβ + ((p−1)/p)nγ at 1 MiB.
    let n = MIB;
    let want = 2.0 * LG_P * ALPHA + 2.0 * frac(n) * BETA + frac(n) * GAMMA;
    assert_close(
        "allreduce rabenseifner 1MiB",
        run(CollKind::Allreduce, Algo::Rabenseifner, n),
        want,
    );
    // At 8 B (count 8 < p' 16) Open MPI's redscat_allgather falls back to recursive doubling.
    let rd = LG_P * (ALPHA + 8.0 * (BETA + GAMMA));
    assert_close(
        "allreduce rabenseifner 8B (OMPI: RD)",
        run(CollKind::Allreduce, Algo::Rabenseifner, 8),
        rd,
    );
    // Rabenseifner proper on 8 bytes (windows 4, 2, 1, 0/1 elements) still follows the paper.
    let all: Vec<Vec<Step>> = (0..P)
        .map(|me| allreduce::rabenseifner(P, me, 8, 1))
        .collect();
    let want = 2.0 * LG_P * ALPHA + 2.0 * frac(8) * BETA + frac(8) * GAMMA;
    assert_close("allreduce pure rabenseifner 8B", play(&all), want);
}

#[test]
fn ring_allgather() {
    // (p−1)α + ((p−1)/p)nβ where n = p·b is the gathered total; OSU's size b is one block.
    for b in [8, MIB] {
        let n = u64::from(P) * b;
        let want = 15.0 * ALPHA + frac(n) * BETA;
        assert_close(
            &format!("allgather ring b={b}"),
            run(CollKind::Allgather, Algo::Ring, b),
            want,
        );
    }
}

#[test]
fn pairwise_alltoall() {
    // (p−1)(α + (n/p)β) with n = p·b the data one rank holds, b = OSU's per-peer block:
    // p−1 exchanges of one block (the self block is a local copy).
    for b in [8, MIB] {
        let want = 15.0 * (ALPHA + b as f64 * BETA);
        assert_close(
            &format!("alltoall pairwise b={b}"),
            run(CollKind::Alltoall, Algo::Pairwise, b),
            want,
        );
    }
}

#[test]
fn bruck_alltoall() {
    // lg p α + (n/2) lg p β with n = p·b: Open MPI's modified Bruck sends, at each of the
    // lg p steps, the p/2 blocks whose index has that bit set (local rotations are copies).
    for b in [8, MIB] {
        let n = (u64::from(P) * b) as f64;
        let want = LG_P * ALPHA + n / 2.0 * LG_P * BETA;
        assert_close(
            &format!("alltoall bruck b={b}"),
            run(CollKind::Alltoall, Algo::Bruck, b),
            want,
        );
    }
}

#[test]
fn what_open_mpi_picks_at_p16() {
    // The fixed rules' choices for the Done-when sizes, and what they cost here.
    let pick = |kind, n| replay_engine::collectives::decide(&CollSpec::new(kind, P, 0, n)).0;
    assert_eq!(pick(CollKind::Bcast, 8), Algo::Knomial);
    assert_eq!(pick(CollKind::Bcast, MIB), Algo::ScatterAllgather);
    // p = 16 falls in the `communicator_size < 32` row: < 64 B is segmented ring (5),
    // which with segsize 0 is the plain ring, which with count < p is recursive doubling.
    assert_eq!(pick(CollKind::Allreduce, 8), Algo::SegmentedRing);
    let rd = LG_P * (ALPHA + 8.0 * (BETA + GAMMA));
    assert_close(
        "allreduce decided 8B",
        run(CollKind::Allreduce, Algo::SegmentedRing, 8),
        rd,
    );
    assert_eq!(pick(CollKind::Allreduce, MIB), Algo::Rabenseifner);
    assert_eq!(pick(CollKind::Allgather, MIB), Algo::RecursiveDoubling);
    assert_eq!(pick(CollKind::Alltoall, 8), Algo::Bruck);
    assert_eq!(pick(CollKind::Alltoall, MIB), Algo::LinearSync);
    // scatter-allgather bcast at 1 MiB: lg p (α) + (p−1)/p nβ for the scatter plus lg p α
    // + (p−1)/p nβ for the recursive-doubling allgather (the comment of
    // bcast_intra_scatter_allgather); the scatter's sends are sequential at each parent.
    let got = run(CollKind::Bcast, Algo::ScatterAllgather, MIB);
    let want = 2.0 * LG_P * ALPHA + 2.0 * frac(MIB) * BETA;
    assert_close("bcast scatter_allgather 1MiB", got, want);
}

/// The same checks through the real engine (`replay_engine::replay`) on its `loggp` fabric
/// in α-β form (no handshake, no host overhead), one collective per rank in a 16-rank
/// trace, the algorithm forced with `--coll`-style overrides.
mod through_engine {
    use super::*;
    use replay_engine::fabric::schema::Value;
    use replay_engine::TraceColumns;
    use replay_engine::{replay, FabricSpec, JobInput, Placement, ReplayOptions};

    /// Simulated time of one collective (op code, send/recv bytes per the trace schema's
    /// convention: alltoall/allgather carry the per-peer block) with `coll` overrides.
    fn engine_time(op: u8, send: i64, recv: i64, coll: &str) -> f64 {
        let p = P as usize;
        let rank: Vec<u32> = (0..P).collect();
        let zeros = vec![0i64; p];
        let (ops, peer, root) = (vec![op; p], vec![-1i32; p], vec![0i32; p]);
        let (sb, rb, tag, comm) = (vec![send; p], vec![recv; p], vec![0i32; p], vec![0i32; p]);
        let (req, iter) = (vec![-1i64; p], vec![0i32; p]);
        let columns = TraceColumns {
            rank: &rank,
            seq: &zeros,
            op: &ops,
            peer: &peer,
            root: &root,
            send_bytes: &sb,
            recv_bytes: &rb,
            tag: &tag,
            comm: &comm,
            request: &req,
            t_start_ns: &zeros,
            t_end_ns: &zeros,
            iteration: &iter,
            ..TraceColumns::default()
        };
        let spec = FabricSpec::from_pairs([
            ("model", Value::from("alpha_beta")),
            ("alpha_us", Value::from(ALPHA / 1000.0)),
            ("beta_ns_per_byte", Value::from(BETA)),
            ("gamma_ns_per_byte", Value::from(GAMMA)),
        ])
        .expect("spec");
        let options = ReplayOptions {
            compute_scale: 0.0,
            coll_overrides: coll.to_string(),
            ..ReplayOptions::default()
        };
        let job = JobInput {
            columns,
            placement: Placement::Linear { offset: 0 },
            foreground: true,
        };
        let out = replay(&[job], Vec::new(), &spec, &options).expect("replay");
        out.jobs[0].total_time_ns
    }

    const BCAST: u8 = 33;
    const ALLREDUCE: u8 = 35;
    const ALLTOALL: u8 = 36;
    const ALLGATHER: u8 = 38;

    #[test]
    fn engine_matches_thakur_formulas() {
        let n = MIB as i64;
        let nf = MIB as f64;
        let lgp_hops = |b: f64| LG_P * (ALPHA + b * BETA);
        let cases: Vec<(&str, u8, i64, i64, &str, f64)> = vec![
            (
                "bcast binomial 8B",
                BCAST,
                8,
                8,
                "bcast=binomial",
                lgp_hops(8.0),
            ),
            (
                "bcast binomial 1MiB",
                BCAST,
                n,
                n,
                "bcast=binomial",
                lgp_hops(nf),
            ),
            (
                "allreduce ring 1MiB",
                ALLREDUCE,
                n,
                n,
                "allreduce=ring",
                30.0 * ALPHA + 2.0 * frac(MIB) * BETA + frac(MIB) * GAMMA,
            ),
            (
                "allreduce recursive doubling 1MiB",
                ALLREDUCE,
                n,
                n,
                "allreduce=recursive_doubling",
                LG_P * (ALPHA + nf * (BETA + GAMMA)),
            ),
            (
                "allreduce rabenseifner 1MiB",
                ALLREDUCE,
                n,
                n,
                "allreduce=rabenseifner",
                2.0 * LG_P * ALPHA + 2.0 * frac(MIB) * BETA + frac(MIB) * GAMMA,
            ),
            (
                "allreduce ring 8B (OMPI: RD)",
                ALLREDUCE,
                8,
                8,
                "allreduce=ring",
                LG_P * (ALPHA + 8.0 * (BETA + GAMMA)),
            ),
            (
                "allgather ring 1MiB blocks",
                ALLGATHER,
                n,
                n,
                "allgather=ring",
                15.0 * ALPHA + frac(16 * MIB) * BETA,
            ),
            (
                "alltoall pairwise 1MiB blocks",
                ALLTOALL,
                n,
                n,
                "alltoall=pairwise",
                15.0 * (ALPHA + nf * BETA),
            ),
            (
                "alltoall bruck 8B blocks",
                ALLTOALL,
                8,
                8,
                "alltoall=bruck",
                LG_P * ALPHA + 64.0 * LG_P * BETA,
            ),
        ];
        for (what, op, s, r, coll, want) in cases {
            assert_close(&format!("engine {what}"), engine_time(op, s, r, coll), want);
        }
    }
}
