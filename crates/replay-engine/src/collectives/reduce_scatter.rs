//! MPI_Reduce_scatter / MPI_Reduce_scatter_block schedules after
//! ompi/mca/coll/base/coll_base_reduce_scatter.c and coll_base_reduce_scatter_block.c
//! (Open MPI 4.1): nonoverlapping / basic linear (reduce + scatter(v)), recursive halving,
//! ring, butterfly and (block only) recursive doubling. Block sizes are handled in bytes.

use super::util::{block_counts, pof2_floor};
use super::{Algo, AlgoParams, CollError, CollKind, CollSpec, Step};

pub fn schedule(
    spec: &CollSpec,
    algo: Algo,
    _params: &AlgoParams,
    me: u32,
) -> Result<Vec<Step>, CollError> {
    let p = spec.comm_size;
    let elem = spec.elem();
    let rc: Vec<u64> = if spec.kind == CollKind::ReduceScatterBlock {
        vec![spec.bytes; p as usize]
    } else if spec.per_peer_bytes.is_empty() {
        block_counts(spec.count(), p)
            .iter()
            .map(|c| c * elem)
            .collect()
    } else {
        spec.per_peer_bytes.clone()
    };
    let block = spec.kind == CollKind::ReduceScatterBlock;
    Ok(match algo {
        Algo::Nonoverlapping | Algo::Linear => reduce_then_scatter(spec, &rc, me, block)?,
        Algo::RecursiveHalving => recursive_halving(p, me, &rc),
        Algo::Ring => ring(p, me, &rc),
        Algo::Butterfly => butterfly(p, me, &rc),
        Algo::RecursiveDoubling if block => recursive_doubling(p, me, &rc),
        _ => {
            return Err(CollError::Unsupported {
                kind: spec.kind,
                algo,
            })
        }
    })
}

/// Reduce of the whole vector to rank 0 (as tuned decides it), then scatter(v) from 0
/// (reduce_scatter: basic linear scatterv; reduce_scatter_block: tuned scatter).
fn reduce_then_scatter(
    spec: &CollSpec,
    rc: &[u64],
    me: u32,
    block: bool,
) -> Result<Vec<Step>, CollError> {
    let p = spec.comm_size;
    let total: u64 = rc.iter().sum();
    let red = CollSpec {
        bytes: total,
        ..CollSpec::new(CollKind::Reduce, p, 0, total)
    };
    let red = CollSpec {
        elem_bytes: spec.elem_bytes,
        ..red
    };
    let (algo, params) = super::decide(&red);
    let mut steps = super::schedule(&red, algo, &params, me)?;
    if block {
        let sc = CollSpec {
            elem_bytes: spec.elem_bytes,
            ..CollSpec::new(CollKind::Scatter, p, 0, spec.bytes)
        };
        let (algo, params) = super::decide(&sc);
        steps.extend(super::schedule(&sc, algo, &params, me)?);
    } else if me == 0 {
        steps.extend(
            (1..p)
                .filter(|&r| rc[r as usize] > 0)
                .map(|r| Step::send(r, rc[r as usize])),
        );
    } else if rc[me as usize] > 0 {
        steps.push(Step::recv(0, rc[me as usize]));
    }
    Ok(steps)
}

/// Sum of the blocks with indices in [lo, hi).
fn span(rc: &[u64], lo: u32, hi: u32) -> u64 {
    rc[lo as usize..hi as usize].iter().sum()
}

/// A step that skips empty transfers, as the recursive halving code does.
fn exchange(peer: u32, send: u64, recv: u64) -> Option<Step> {
    let mut st = Step::default();
    if send > 0 {
        st.sends.push((peer, send));
    }
    if recv > 0 {
        st.recvs.push((peer, recv));
        st.reduce_bytes = recv;
    }
    (!st.is_empty()).then_some(st)
}

/// reduce_scatter_intra_basic_recursivehalving: odd ranks among the first 2r fold their
/// whole vector into rank-1; p' ranks halve the (virtual) block range with distance
/// halving; the even ranks then hand the odd ones their result.
fn recursive_halving(p: u32, me: u32, rc: &[u64]) -> Vec<Step> {
    let pof2 = pof2_floor(p);
    let rem = p - pof2;
    let total: u64 = rc.iter().sum();
    let mut steps = Vec::new();
    let newrank = if me < 2 * rem {
        if !me.is_multiple_of(2) {
            steps.push(Step::send(me - 1, total));
            None
        } else {
            steps.push(Step::recv(me + 1, total).reducing(total));
            Some(me / 2)
        }
    } else {
        Some(me - rem)
    };
    if let Some(nr) = newrank {
        // virtual block i covers ranks 2i, 2i+1 (i < rem) or i + rem
        let tmp: Vec<u64> = (0..pof2)
            .map(|i| {
                if i < rem {
                    rc[2 * i as usize] + rc[2 * i as usize + 1]
                } else {
                    rc[(i + rem) as usize]
                }
            })
            .collect();
        let (mut send_index, mut recv_index, mut last_index) = (0u32, 0u32, pof2);
        let mut mask = pof2 >> 1;
        while mask > 0 {
            let np = nr ^ mask;
            let peer = if np < rem { np * 2 } else { np + rem };
            let (sc, rcv);
            if nr < np {
                send_index = recv_index + mask;
                sc = span(&tmp, send_index, last_index);
                rcv = span(&tmp, recv_index, send_index);
            } else {
                recv_index = send_index + mask;
                sc = span(&tmp, send_index, recv_index);
                rcv = span(&tmp, recv_index, last_index);
            }
            steps.extend(exchange(peer, sc, rcv));
            send_index = recv_index;
            last_index = recv_index + mask;
            mask >>= 1;
        }
    }
    if me < 2 * rem {
        if me.is_multiple_of(2) && rc[me as usize + 1] > 0 {
            steps.push(Step::send(me + 1, rc[me as usize + 1]));
        } else if !me.is_multiple_of(2) && rc[me as usize] > 0 {
            steps.push(Step::recv(me - 1, rc[me as usize]));
        }
    }
    steps
}

/// reduce_scatter_intra_ring: step i sends the partial block me-i to the right, receives
/// block me-i-1 from the left and reduces it; the last received block is my own.
fn ring(p: u32, me: u32, rc: &[u64]) -> Vec<Step> {
    let (left, right) = ((me + p - 1) % p, (me + 1) % p);
    (1..p)
        .map(|i| {
            let (sb, rb) = ((me + p - i) % p, (me + 2 * p - i - 1) % p);
            Step::sendrecv(right, rc[sb as usize], left, rc[rb as usize]).reducing(rc[rb as usize])
        })
        .collect()
}

/// reduce_scatter_intra_butterfly: even ranks among the first 2r fold into rank+1, the p'
/// survivors exchange half of their current block range with distance halving, and the
/// results of folded ranks are sent back. Block ranges are modelled as contiguous halves
/// (exact for equal blocks; Open MPI permutes blocks, which only moves uneven sizes).
fn butterfly(p: u32, me: u32, rc: &[u64]) -> Vec<Step> {
    let pof2 = pof2_floor(p);
    let rem = p - pof2;
    let total: u64 = rc.iter().sum();
    let mut steps = Vec::new();
    let vrank = if me < 2 * rem {
        if me.is_multiple_of(2) {
            steps.push(Step::send(me + 1, total));
            None
        } else {
            steps.push(Step::recv(me - 1, total).reducing(total));
            Some(me / 2)
        }
    } else {
        Some(me - rem)
    };
    if let Some(v) = vrank {
        let tmp: Vec<u64> = (0..pof2)
            .map(|i| {
                if i < rem {
                    rc[2 * i as usize] + rc[2 * i as usize + 1]
                } else {
                    rc[(i + rem) as usize]
                }
            })
            .collect();
        let (mut lo, mut hi) = (0u32, pof2);
        let mut mask = pof2 >> 1;
        while mask > 0 {
            let vp = v ^ mask;
            let peer = if vp < rem { vp * 2 + 1 } else { vp + rem };
            let mid = lo + (hi - lo) / 2;
            let (keep, give) = if v & mask == 0 {
                ((lo, mid), (mid, hi))
            } else {
                ((mid, hi), (lo, mid))
            };
            let (s, r) = (span(&tmp, give.0, give.1), span(&tmp, keep.0, keep.1));
            steps.push(Step::sendrecv(peer, s, peer, r).reducing(r));
            (lo, hi) = keep;
            mask >>= 1;
        }
    }
    if me < 2 * rem {
        if me.is_multiple_of(2) {
            steps.push(Step::recv(me + 1, rc[me as usize]));
        } else {
            steps.push(Step::send(me - 1, rc[me as usize - 1]));
        }
    }
    steps
}

/// reduce_scatter_block_intra_recursivedoubling (MPICH's algorithm for non-commutative
/// operations), modelled as lg p' exchanges of the whole vector with a non-power-of-two
/// fold like recursive-doubling allreduce; the final hand-back carries one block.
fn recursive_doubling(p: u32, me: u32, rc: &[u64]) -> Vec<Step> {
    let total: u64 = rc.iter().sum();
    let mut steps = super::allreduce::recursive_doubling(p, me, total, 1);
    if me < 2 * (p - pof2_floor(p)) {
        let own = if me.is_multiple_of(2) {
            rc[me as usize]
        } else {
            rc[me as usize - 1]
        };
        if let Some(last) = steps.last_mut() {
            last.sends.iter_mut().for_each(|s| s.1 = own);
            last.recvs.iter_mut().for_each(|r| r.1 = own);
        }
    }
    steps
}
