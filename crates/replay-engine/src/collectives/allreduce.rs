//! MPI_Allreduce programs after ompi/mca/coll/base/coll_base_allreduce.c (v4.1.4):
//! basic_linear, nonoverlapping (reduce + bcast through comm->c_coll), recursive doubling,
//! ring, segmented ring and Rabenseifner (`redscat_allgather`), with 4.1.4's fallbacks:
//! ring with count < p runs recursive doubling; segmented ring with count < p * segcount
//! runs ring; Rabenseifner with count < p' or a non-commutative op runs basic_linear.

use super::halving::{self, Fold};
use super::util::{block_counts, pof2_floor, seg_count};
use super::{bcast, reduce, Algo, CollError, CollKind, Ctx, Program};

pub fn build(at: &Ctx, algo: Algo, prog: &mut Program) -> Result<(), CollError> {
    let (spec, me) = (at.spec, at.me);
    let p = spec.comm_size;
    let (count, elem) = (spec.count(), spec.elem());
    match algo {
        Algo::Linear => linear(p, me, spec.bytes, prog),
        Algo::Nonoverlapping => {
            // allreduce_intra_nonoverlapping: c_coll reduce to 0, then c_coll bcast from 0
            at.call(&spec.as_kind(CollKind::Reduce, 0, spec.bytes), prog)?;
            at.call(&spec.as_kind(CollKind::Bcast, 0, spec.bytes), prog)?;
        }
        Algo::RecursiveDoubling => recursive_doubling(p, me, count, elem, prog),
        Algo::Ring => ring_or_rd(p, me, count, elem, prog),
        Algo::SegmentedRing => {
            let segcount = seg_count(at.params.segsize, elem, count);
            if count < u64::from(p) * segcount {
                // "count < size * segcount - use regular ring"
                ring_or_rd(p, me, count, elem, prog);
            } else {
                segmented_ring(p, me, count, elem, segcount, prog);
            }
        }
        Algo::Rabenseifner => {
            if count < u64::from(pof2_floor(p)) || !spec.commutative {
                // "switching to basic linear allreduce"
                linear(p, me, spec.bytes, prog);
            } else {
                rabenseifner(p, me, count, elem, prog);
            }
        }
        _ => return Err(at.unsupported(algo)),
    }
    Ok(())
}

/// allreduce_intra_basic_linear: reduce_intra_basic_linear to 0, then
/// bcast_intra_basic_linear from 0 (the base functions themselves, not c_coll).
pub fn linear(p: u32, me: u32, bytes: u64, prog: &mut Program) {
    reduce::linear(p, 0, me, bytes, prog);
    bcast::linear(p, 0, me, bytes, prog);
}

/// allreduce_intra_ring: "count less than size - use recursive doubling".
fn ring_or_rd(p: u32, me: u32, count: u64, elem: u64, prog: &mut Program) {
    if count < u64::from(p) {
        recursive_doubling(p, me, count, elem, prog);
    } else {
        ring(p, me, count, elem, prog);
    }
}

/// allreduce_intra_recursivedoubling: of the first 2r ranks the even ones send their
/// vector to rank + 1 (which reduces it) and wait for the result at the end; p' ranks
/// exchange the whole vector lg p' times (sendrecv), reducing each time.
pub fn recursive_doubling(p: u32, me: u32, count: u64, elem: u64, prog: &mut Program) {
    let n = count * elem;
    let adj = pof2_floor(p);
    let extra = p - adj;
    let newrank = if me < 2 * extra {
        if me.is_multiple_of(2) {
            prog.send(me + 1, n);
            None
        } else {
            prog.recv(me - 1, n);
            prog.reduce(n);
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
            prog.sendrecv(me, remote, n, remote, n);
            prog.reduce(n);
            distance <<= 1;
        }
    }
    if me < 2 * extra {
        if me.is_multiple_of(2) {
            prog.recv(me + 1, n);
        } else {
            prog.send(me - 1, n);
        }
    }
}

/// The ring's computation loop over `blocks` (one phase of the segmented ring): irecv
/// from the left, blocking send of the own block to the right; then for k = 2..p-1 post
/// the next receive, wait for the previous one, reduce it and send it on; finally wait
/// for and reduce block me+1.
fn ring_reduce_scatter(p: u32, me: u32, blocks: &[u64], elem: u64, prog: &mut Program) {
    let (left, right) = ((me + p - 1) % p, (me + 1) % p);
    let b = |i: u32| blocks[i as usize] * elem;
    // receives are posted for max_segcount elements; messages carry the sender's block
    let mut pending = prog.irecv(left, b((me + p - 1) % p));
    prog.send(right, b(me));
    for k in 2..p {
        let prev = (me + p - k + 1) % p;
        let next = prog.irecv(left, b((me + p - k) % p));
        prog.wait(pending);
        prog.reduce(b(prev));
        prog.send(right, b(prev));
        pending = next;
    }
    prog.wait(pending);
    prog.reduce(b((me + 1) % p));
}

/// The distribution loop (a ring allgather shifted by one): p-1 sendrecvs.
fn ring_allgather(p: u32, me: u32, blocks: &[u64], elem: u64, prog: &mut Program) {
    let (left, right) = ((me + p - 1) % p, (me + 1) % p);
    let b = |i: u32| blocks[i as usize] * elem;
    for k in 0..p - 1 {
        let (send_from, recv_from) = ((me + 1 + p - k) % p, (me + p - k) % p);
        prog.sendrecv(me, right, b(send_from), left, b(recv_from));
    }
}

/// allreduce_intra_ring without its count < p fallback: blocks of count/p elements (the
/// first count % p one larger, COLL_BASE_COMPUTE_BLOCKCOUNT).
pub fn ring(p: u32, me: u32, count: u64, elem: u64, prog: &mut Program) {
    let blocks = block_counts(count, p);
    ring_reduce_scatter(p, me, &blocks, elem, prog);
    ring_allgather(p, me, &blocks, elem, prog);
}

/// allreduce_intra_ring_segmented: num_phases = count / (p * segcount), one more when
/// the rest is >= p and more than half of p * segcount; each block is split into
/// num_phases parts (early ones larger), the ring reduce-scatter runs once per phase on
/// those parts, then one ring allgather of the whole blocks.
fn segmented_ring(p: u32, me: u32, count: u64, elem: u64, segcount: u64, prog: &mut Program) {
    let span = u64::from(p) * segcount;
    let mut phases = count / span;
    let rest = count % span;
    if rest >= u64::from(p) && rest > span / 2 {
        phases += 1;
    }
    let blocks = block_counts(count, p);
    let parts: Vec<Vec<u64>> = blocks
        .iter()
        .map(|&b| block_counts(b, phases as u32))
        .collect();
    for ph in 0..phases as usize {
        let phase_blocks: Vec<u64> = parts.iter().map(|s| s[ph]).collect();
        ring_reduce_scatter(p, me, &phase_blocks, elem, prog);
    }
    ring_allgather(p, me, &blocks, elem, prog);
}

/// allreduce_intra_redscat_allgather without its fallback: fold, reduce-scatter by
/// recursive halving, allgather by recursive doubling, unfold.
pub fn rabenseifner(p: u32, me: u32, count: u64, elem: u64, prog: &mut Program) {
    let fold = Fold::new(p);
    fold.fold_in(me, count, elem, prog);
    if let Some(v) = fold.vrank(me) {
        halving::reduce_scatter(&fold, v, count, elem, prog);
        halving::allgather_back(&fold, v, count, elem, prog);
    }
    if me < 2 * fold.rem {
        let n = count * elem;
        if me.is_multiple_of(2) {
            prog.send(me + 1, n);
        } else {
            prog.recv(me - 1, n);
        }
    }
}
