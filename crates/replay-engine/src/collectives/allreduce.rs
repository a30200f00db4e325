//! MPI_Allreduce schedules after ompi/mca/coll/base/coll_base_allreduce.c (Open MPI 4.1):
//! basic linear, nonoverlapping (reduce + bcast as tuned decides them), recursive doubling,
//! ring, segmented ring and Rabenseifner (`redscat_allgather`), with Open MPI's fallbacks:
//! ring needs count >= p, segmented ring needs count >= p * segcount, Rabenseifner needs
//! count >= p' (the largest power of two <= p); otherwise recursive doubling is used.

use super::halving::{self, Fold};
use super::util::{block_counts, pof2_floor, seg_count};
use super::{bcast, reduce, Algo, AlgoParams, CollError, CollKind, CollSpec, Step};

pub fn schedule(
    spec: &CollSpec,
    algo: Algo,
    params: &AlgoParams,
    me: u32,
) -> Result<Vec<Step>, CollError> {
    let p = spec.comm_size;
    let (count, elem) = (spec.count(), spec.elem());
    let rd = || recursive_doubling(p, me, count, elem);
    Ok(match algo {
        Algo::Linear => {
            let mut s = reduce::linear(p, 0, me, spec.bytes);
            s.extend(bcast::linear(p, 0, me, spec.bytes));
            s
        }
        Algo::Nonoverlapping => nonoverlapping(spec, me)?,
        Algo::RecursiveDoubling => rd(),
        Algo::Ring if count < u64::from(p) => rd(),
        Algo::Ring => ring(p, me, count, elem),
        Algo::SegmentedRing => {
            let segcount = seg_count(params.segsize, elem, count);
            if count < u64::from(p) {
                rd()
            } else if count < u64::from(p) * segcount {
                ring(p, me, count, elem)
            } else {
                segmented_ring(p, me, count, elem, segcount)
            }
        }
        Algo::Rabenseifner if count < u64::from(pof2_floor(p)) => rd(),
        Algo::Rabenseifner => rabenseifner(p, me, count, elem),
        _ => {
            return Err(CollError::Unsupported {
                kind: spec.kind,
                algo,
            })
        }
    })
}

/// reduce to rank 0 followed by bcast from rank 0, each as coll/tuned's fixed rules pick.
fn nonoverlapping(spec: &CollSpec, me: u32) -> Result<Vec<Step>, CollError> {
    let mut steps = Vec::new();
    for kind in [CollKind::Reduce, CollKind::Bcast] {
        let sub = CollSpec {
            kind,
            root: 0,
            ..spec.clone()
        };
        let (algo, params) = super::decide(&sub);
        steps.extend(super::schedule(&sub, algo, &params, me)?);
    }
    Ok(steps)
}

/// allreduce_intra_recursivedoubling: the first 2r ranks fold pairwise (even sends to odd,
/// odd survives), p' ranks exchange the whole vector lg p' times, odd ranks hand back.
pub fn recursive_doubling(p: u32, me: u32, count: u64, elem: u64) -> Vec<Step> {
    let n = count * elem;
    let adj = pof2_floor(p);
    let extra = p - adj;
    let mut steps = Vec::new();
    let newrank = if me < 2 * extra {
        if me.is_multiple_of(2) {
            steps.push(Step::send(me + 1, n));
            None
        } else {
            steps.push(Step::recv(me - 1, n).reducing(n));
            Some(me >> 1)
        }
    } else {
        Some(me - extra)
    };
    if let Some(nr) = newrank {
        let mut distance = 1;
        while distance < adj {
            let nremote = nr ^ distance;
            let remote = if nremote < extra {
                nremote * 2 + 1
            } else {
                nremote + extra
            };
            steps.push(Step::sendrecv(remote, n, remote, n).reducing(n));
            distance <<= 1;
        }
    }
    if me < 2 * extra {
        steps.push(if me.is_multiple_of(2) {
            Step::recv(me + 1, n)
        } else {
            Step::send(me - 1, n)
        });
    }
    steps
}

/// allreduce_intra_ring without Open MPI's count < p fallback: p-1 reduce-scatter steps on
/// blocks of count/p elements (early blocks one larger), then p-1 allgather steps.
pub fn ring(p: u32, me: u32, count: u64, elem: u64) -> Vec<Step> {
    let blocks = block_counts(count, p);
    let mut steps = ring_reduce_scatter(p, me, &blocks, elem);
    steps.extend(ring_allgather(p, me, &blocks, elem));
    steps
}

fn ring_reduce_scatter(p: u32, me: u32, blocks: &[u64], elem: u64) -> Vec<Step> {
    let (left, right) = ((me + p - 1) % p, (me + 1) % p);
    let b = |i: u32| blocks[i as usize] * elem;
    (1..p)
        .map(|i| {
            let (sb, rb) = ((me + p - i + 1) % p, (me + p - i) % p);
            Step::sendrecv(right, b(sb), left, b(rb)).reducing(b(rb))
        })
        .collect()
}

fn ring_allgather(p: u32, me: u32, blocks: &[u64], elem: u64) -> Vec<Step> {
    let (left, right) = ((me + p - 1) % p, (me + 1) % p);
    let b = |i: u32| blocks[i as usize] * elem;
    (0..p - 1)
        .map(|k| Step::sendrecv(right, b((me + 1 + p - k) % p), left, b((me + p - k) % p)))
        .collect()
}

/// allreduce_intra_ring_segmented: the ring reduce-scatter runs once per phase on a
/// segment-sized slice of every block, then one ring allgather of the whole blocks.
fn segmented_ring(p: u32, me: u32, count: u64, elem: u64, segcount: u64) -> Vec<Step> {
    let blocks = block_counts(count, p);
    let phases = blocks[0].div_ceil(segcount).max(1);
    let slices: Vec<Vec<u64>> = blocks
        .iter()
        .map(|&b| block_counts(b, phases as u32))
        .collect();
    let mut steps = Vec::new();
    for ph in 0..phases as usize {
        let phase_blocks: Vec<u64> = slices.iter().map(|s| s[ph]).collect();
        steps.extend(ring_reduce_scatter(p, me, &phase_blocks, elem));
    }
    steps.extend(ring_allgather(p, me, &blocks, elem));
    steps
}

/// allreduce_intra_redscat_allgather without its fallback: fold, reduce-scatter by
/// recursive halving, allgather by recursive doubling, unfold.
pub fn rabenseifner(p: u32, me: u32, count: u64, elem: u64) -> Vec<Step> {
    let fold = Fold::new(p);
    let mut steps = fold.fold_in(me, count, elem);
    if let Some(v) = fold.vrank(me) {
        steps.extend(halving::reduce_scatter(&fold, v, count, elem));
        steps.extend(halving::allgather_back(&fold, v, count, elem));
    }
    if me < 2 * fold.rem {
        let n = count * elem;
        steps.push(if me.is_multiple_of(2) {
            Step::send(me + 1, n)
        } else {
            Step::recv(me - 1, n)
        });
    }
    steps
}
