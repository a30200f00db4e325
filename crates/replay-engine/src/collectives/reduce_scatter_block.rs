//! MPI_Reduce_scatter_block programs after ompi/mca/coll/base/coll_base_reduce_scatter_block.c
//! (v4.1.4): basic_linear (c_coll reduce + c_coll scatter), recursive doubling, recursive
//! halving (non-commutative op: basic_linear) and butterfly (its own power-of-two form).
//! Counts are in elements of one block (`rcount`).

use super::util::{mirror_perm, pof2_floor, rounddown};
use super::{Algo, CollError, CollKind, Ctx, Program};

pub fn build(at: &Ctx, algo: Algo, prog: &mut Program) -> Result<(), CollError> {
    let (spec, me) = (at.spec, at.me);
    let p = spec.comm_size;
    let (rcount, elem) = (spec.count(), spec.elem());
    if rcount == 0 && algo != Algo::Linear {
        return Ok(()); // "if (rcount == 0) return MPI_SUCCESS"
    }
    match algo {
        Algo::Linear => linear(at, prog)?,
        Algo::RecursiveDoubling => recursive_doubling(p, me, rcount, elem, prog),
        Algo::RecursiveHalving if !spec.commutative => linear(at, prog)?,
        Algo::RecursiveHalving => recursive_halving(p, me, rcount, elem, prog),
        Algo::Butterfly if p.is_power_of_two() => butterfly_pof2(p, me, rcount, elem, prog),
        Algo::Butterfly => butterfly(p, me, rcount, elem, prog),
        _ => return Err(at.unsupported(algo)),
    }
    Ok(())
}

/// reduce_scatter_block_basic_linear: c_coll reduce of the whole vector to 0, then c_coll
/// scatter of one block each.
fn linear(at: &Ctx, prog: &mut Program) -> Result<(), CollError> {
    let spec = at.spec;
    let total = spec.bytes * u64::from(spec.comm_size);
    if total == 0 {
        return Ok(());
    }
    at.call(&spec.as_kind(CollKind::Reduce, 0, total), prog)?;
    at.call(&spec.as_kind(CollKind::Scatter, 0, spec.bytes), prog)
}

/// reduce_scatter_block_intra_recursivedoubling: at distance `mask` a rank exchanges with
/// rank ^ mask everything outside its partner's subtree, then (when the partner subtree
/// reaches past p) the subtree halves pass the received part down; it reduces whatever it
/// received.
fn recursive_doubling(p: u32, me: u32, rcount: u64, elem: u64, prog: &mut Program) {
    // blocks a subtree [root, root + mask) does not own: all but those
    let outside = |tree_root: u32, mask: u32| {
        let tail = p.saturating_sub(tree_root + mask);
        u64::from(tree_root + tail) * rcount
    };
    let mut mask = 1u32;
    while mask < p {
        let remote = me ^ mask;
        let cur_root = rounddown(me, mask);
        let remote_root = rounddown(remote, mask);
        let send = outside(cur_root, mask);
        let recv = outside(remote_root, mask);
        let mut received = false;
        if remote < p {
            prog.sendrecv(me, remote, send * elem, remote, recv * elem);
            received = true;
        }
        if remote_root + mask > p {
            let alldata = p.saturating_sub(cur_root + mask);
            let mut rh = mask >> 1;
            while rh > 0 {
                let r = me ^ rh;
                let tree_root = rounddown(me, rh << 1);
                if r > me && me < tree_root + alldata && r >= tree_root + alldata {
                    prog.send(r, recv * elem);
                } else if r < me && r < tree_root + alldata && me >= tree_root + alldata {
                    prog.recv(r, recv * elem);
                    received = true;
                }
                rh >>= 1;
            }
        }
        if received {
            prog.reduce(recv * elem);
        }
        mask <<= 1;
    }
}

/// ompi_range_sum: blocks of virtual blocks a..=b when virtual blocks 0..=r stand for two.
fn range_sum(a: u32, b: u32, r: i64) -> u64 {
    let (a, b) = (i64::from(a), i64::from(b));
    let n = if r < a {
        b - a + 1
    } else if r > b {
        2 * (b - a + 1)
    } else {
        2 * (r - a + 1) + b - r
    };
    n.max(0) as u64
}

/// The non-power-of-two fold shared by recursive halving and butterfly: the even ones of
/// the first 2r ranks send their vector to rank + 1, which reduces it.
fn fold(p: u32, me: u32, total: u64, elem: u64, prog: &mut Program) -> (u32, u32, Option<u32>) {
    let pof2 = pof2_floor(p);
    let rem = p - pof2;
    let v = if me < 2 * rem {
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
    (pof2, rem, v)
}

/// reduce_scatter_block_intra_recursivehalving: fold, halve the (virtual) block range with
/// distance halving (irecv if anything comes, send if anything goes, wait, reduce), then
/// the odd ones send the even ones their block.
fn recursive_halving(p: u32, me: u32, rcount: u64, elem: u64, prog: &mut Program) {
    let total = rcount * u64::from(p);
    let (pof2, rem, vrank) = fold(p, me, total, elem, prog);
    if let Some(v) = vrank {
        let r = i64::from(rem) - 1;
        let (mut send_index, mut recv_index, mut last_index) = (0u32, 0u32, pof2);
        let mut mask = pof2 >> 1;
        while mask > 0 {
            let vpeer = v ^ mask;
            let peer = if vpeer < rem {
                vpeer * 2 + 1
            } else {
                vpeer + rem
            };
            let (sc, rcv);
            if v < vpeer {
                send_index = recv_index + mask;
                sc = rcount * range_sum(send_index, last_index - 1, r);
                rcv = rcount * range_sum(recv_index, send_index - 1, r);
            } else {
                recv_index = send_index + mask;
                sc = rcount * range_sum(send_index, recv_index - 1, r);
                rcv = rcount * range_sum(recv_index, last_index - 1, r);
            }
            let req = (rcv > 0).then(|| prog.irecv(peer, rcv * elem));
            if sc > 0 {
                prog.send(peer, sc * elem);
            }
            if let Some(req) = req {
                prog.wait(req);
                prog.reduce(rcv * elem);
            }
            send_index = recv_index;
            last_index = recv_index + mask;
            mask >>= 1;
        }
    }
    if me < 2 * rem {
        if me.is_multiple_of(2) {
            prog.recv(me + 1, rcount * elem);
        } else {
            prog.send(me - 1, rcount * elem);
        }
    }
}

/// reduce_scatter_block_intra_butterfly on a non-power-of-two size: fold, exchange halves
/// of the block range with distance doubling (sendrecv, reduce), then send the result to
/// the rank of the mirror permutation (a survivor standing for two ranks first sends the
/// even one its block).
fn butterfly(p: u32, me: u32, rcount: u64, elem: u64, prog: &mut Program) {
    let total = rcount * u64::from(p);
    let (pof2, rem, vrank) = fold(p, me, total, elem, prog);
    let log2 = pof2.trailing_zeros();
    let real = |v: u32| if v < rem { v * 2 + 1 } else { v + rem };
    let Some(v) = vrank else {
        let vpeer = mirror_perm(me.div_ceil(2), log2);
        prog.recv(real(vpeer), rcount * elem);
        return;
    };
    let r = i64::from(rem) - 1;
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
        let sc = rcount * range_sum(send_index, send_index + nblocks - 1, r);
        let rcv = rcount * range_sum(recv_index, recv_index + nblocks - 1, r);
        prog.sendrecv(me, peer, sc * elem, peer, rcv * elem);
        prog.reduce(rcv * elem);
        send_index = recv_index;
        mask <<= 1;
    }
    let vpeer = mirror_perm(v, log2);
    let peer = real(vpeer);
    if vpeer < rem {
        prog.send(peer - 1, rcount * elem);
    }
    if vpeer != v {
        prog.sendrecv(me, peer, rcount * elem, peer, rcount * elem);
    }
}

/// reduce_scatter_block_intra_butterfly_pof2: lg p sendrecvs of half the remaining vector
/// (total/2, total/4, ...), reducing each.
fn butterfly_pof2(p: u32, me: u32, rcount: u64, elem: u64, prog: &mut Program) {
    let mut nblocks = rcount * u64::from(p);
    let mut mask = 1;
    while mask < p {
        let peer = me ^ mask;
        nblocks /= 2;
        prog.sendrecv(me, peer, nblocks * elem, peer, nblocks * elem);
        prog.reduce(nblocks * elem);
        mask <<= 1;
    }
}
