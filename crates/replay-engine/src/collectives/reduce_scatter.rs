//! MPI_Reduce_scatter programs after ompi/mca/coll/base/coll_base_reduce_scatter.c
//! (v4.1.4): nonoverlapping (c_coll reduce to 0 + coll/basic scatterv), recursive halving,
//! ring and butterfly. Block sizes are tracked in elements, messages in bytes.

use super::gather_scatter::basic_scatterv;
use super::util::{block_counts, mirror_perm, pof2_floor};
use super::{Algo, CollError, CollKind, Ctx, Program};

pub fn build(at: &Ctx, algo: Algo, prog: &mut Program) -> Result<(), CollError> {
    let (spec, me) = (at.spec, at.me);
    let p = spec.comm_size;
    let elem = spec.elem();
    // recvcounts in elements
    let rc: Vec<u64> = if spec.per_peer_bytes.is_empty() {
        block_counts(spec.count(), p)
    } else {
        spec.per_peer_bytes.iter().map(|b| b / elem).collect()
    };
    match algo {
        Algo::Nonoverlapping => {
            let total: u64 = rc.iter().sum();
            at.call(&spec.as_kind(CollKind::Reduce, 0, total * elem), prog)?;
            let bytes: Vec<u64> = rc.iter().map(|c| c * elem).collect();
            basic_scatterv(p, 0, me, bytes[me as usize], &bytes, prog);
        }
        Algo::RecursiveHalving => recursive_halving(p, me, &rc, elem, prog),
        Algo::Ring => ring(p, me, &rc, elem, prog),
        Algo::Butterfly => butterfly(p, me, &rc, elem, prog),
        _ => return Err(at.unsupported(algo)),
    }
    Ok(())
}

fn span(v: &[u64], lo: u32, hi: u32) -> u64 {
    v[lo as usize..hi as usize].iter().sum()
}

/// reduce_scatter_intra_basic_recursivehalving: of the first 2r ranks the even ones send
/// their whole vector to rank + 1 (which reduces it); p' ranks halve the block range with
/// distance halving (irecv if anything comes, blocking send if anything goes, wait and
/// reduce); the odd ones then send the even ones their block.
fn recursive_halving(p: u32, me: u32, rc: &[u64], elem: u64, prog: &mut Program) {
    let count: u64 = rc.iter().sum();
    if count == 0 {
        return;
    }
    let pof2 = pof2_floor(p);
    let rem = p - pof2;
    let tmp_rank = if me < 2 * rem {
        if me.is_multiple_of(2) {
            prog.send(me + 1, count * elem);
            None
        } else {
            prog.recv(me - 1, count * elem);
            prog.reduce(count * elem);
            Some(me / 2)
        }
    } else {
        Some(me - rem)
    };
    if let Some(tr) = tmp_rank {
        let tmp: Vec<u64> = (0..pof2)
            .map(|i| {
                if i < rem {
                    rc[2 * i as usize + 1] + rc[2 * i as usize]
                } else {
                    rc[(i + rem) as usize]
                }
            })
            .collect();
        let (mut send_index, mut recv_index, mut last_index) = (0u32, 0u32, pof2);
        let mut mask = pof2 >> 1;
        while mask > 0 {
            let tp = tr ^ mask;
            let peer = if tp < rem { tp * 2 + 1 } else { tp + rem };
            let (sc, rcv);
            if tr < tp {
                send_index = recv_index + mask;
                sc = span(&tmp, send_index, last_index);
                rcv = span(&tmp, recv_index, send_index);
            } else {
                recv_index = send_index + mask;
                sc = span(&tmp, send_index, recv_index);
                rcv = span(&tmp, recv_index, last_index);
            }
            let r = (rcv > 0).then(|| prog.irecv(peer, rcv * elem));
            if sc > 0 {
                prog.send(peer, sc * elem);
            }
            if let Some(r) = r {
                prog.wait(r);
                prog.reduce(rcv * elem);
            }
            send_index = recv_index;
            last_index = recv_index + mask;
            mask >>= 1;
        }
    }
    if me < 2 * rem {
        if me.is_multiple_of(2) {
            if rc[me as usize] > 0 {
                prog.recv(me + 1, rc[me as usize] * elem);
            }
        } else if rc[me as usize - 1] > 0 {
            prog.send(me - 1, rc[me as usize - 1] * elem);
        }
    }
}

/// reduce_scatter_intra_ring: irecv from the left, blocking send of block me-1 to the
/// right; for k = 2..p-1 post the next receive, wait for the previous one, reduce block
/// me-k and send it on; finally wait for and reduce the own block.
fn ring(p: u32, me: u32, rc: &[u64], elem: u64, prog: &mut Program) {
    let (left, right) = ((me + p - 1) % p, (me + 1) % p);
    let b = |i: u32| rc[i as usize] * elem;
    // the left neighbour first sends its block left-1 = me-2
    let mut pending = prog.irecv(left, b((me + p - 2) % p));
    prog.send(right, b(left));
    for k in 2..p {
        let prev = (me + p - k) % p;
        let next = prog.irecv(left, b((me + 2 * p - k - 1) % p));
        prog.wait(pending);
        prog.reduce(b(prev));
        prog.send(right, b(prev));
        pending = next;
    }
    prog.wait(pending);
    prog.reduce(b(me));
}

/// Elements of blocks lo..=hi of the virtual ranks, a virtual block i < r covering the
/// blocks of ranks 2i and 2i+1 (ompi_sum_counts).
fn sum_counts(rc: &[u64], rem: u32, lo: u32, hi: u32) -> u64 {
    let lo = if lo < rem { lo * 2 } else { lo + rem };
    let hi = if hi < rem { hi * 2 + 1 } else { hi + rem };
    span(rc, lo, hi + 1)
}

/// reduce_scatter_intra_butterfly: the even ones of the first 2r ranks send their vector
/// to rank + 1 (which reduces it); the p' survivors exchange halves of their block range
/// with distance doubling (sendrecv, reduce); then each sends its result to the rank of
/// the mirror permutation (a survivor standing for two ranks first sends the even one its
/// block).
fn butterfly(p: u32, me: u32, rc: &[u64], elem: u64, prog: &mut Program) {
    let total: u64 = rc.iter().sum();
    let pof2 = pof2_floor(p);
    let rem = p - pof2;
    let log2 = pof2.trailing_zeros();
    let vrank = if me < 2 * rem {
        if me.is_multiple_of(2) {
            prog.send(me + 1, total * elem);
            None
        } else {
            prog.recv(me - 1, total * elem);
            prog.reduce(total * elem);
            Some(me / 2)
        }
    } else {
        Some(me - rem)
    };
    let real = |v: u32| if v < rem { v * 2 + 1 } else { v + rem };
    let Some(v) = vrank else {
        let vpeer = mirror_perm(me.div_ceil(2), log2);
        prog.recv(real(vpeer), rc[me as usize] * elem);
        return;
    };
    let (mut nblocks, mut send_index, mut recv_index) = (pof2, 0u32, 0u32);
    let mut mask = 1;
    while mask < pof2 {
        let peer = real(v ^ mask);
        nblocks /= 2;
        if v & mask == 0 {
            send_index += nblocks;
        } else {
            recv_index += nblocks;
        }
        let sc = sum_counts(rc, rem, send_index, send_index + nblocks - 1);
        let rcv = sum_counts(rc, rem, recv_index, recv_index + nblocks - 1);
        prog.sendrecv(me, peer, sc * elem, peer, rcv * elem);
        prog.reduce(rcv * elem);
        send_index = recv_index;
        mask <<= 1;
    }
    let vpeer = mirror_perm(v, log2);
    let peer = real(vpeer);
    let mut index = if send_index < rem {
        2 * send_index
    } else {
        rem + send_index
    };
    if vpeer < rem {
        prog.send(peer - 1, rc[index as usize] * elem);
        index += 1;
    }
    if vpeer != v {
        prog.sendrecv(
            me,
            peer,
            rc[index as usize] * elem,
            peer,
            rc[me as usize] * elem,
        );
    }
}
