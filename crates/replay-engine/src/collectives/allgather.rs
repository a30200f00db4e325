//! MPI_Allgather / MPI_Allgatherv programs after ompi/mca/coll/base/coll_base_allgather.c
//! and coll_base_allgatherv.c (v4.1.4): linear (c_coll gather + bcast; allgatherv:
//! coll/basic gatherv + c_coll bcast of one indexed element), Bruck, recursive doubling
//! (power-of-two sizes only, else Bruck), ring, neighbour exchange (even sizes only, else
//! ring) and two_procs (2 ranks only).

use super::{Algo, CollError, CollKind, Ctx, Program};

pub fn build(at: &Ctx, algo: Algo, prog: &mut Program) -> Result<(), CollError> {
    let (spec, me) = (at.spec, at.me);
    let p = spec.comm_size;
    let v = spec.kind == CollKind::Allgatherv;
    let blocks: Vec<u64> = if v {
        (0..p as usize)
            .map(|r| spec.per_peer_bytes.get(r).copied().unwrap_or(0))
            .collect()
    } else {
        vec![spec.bytes; p as usize]
    };
    let sum = |first: u32, n: u32| {
        (0..n)
            .map(|j| blocks[((first + j) % p) as usize])
            .sum::<u64>()
    };
    match algo {
        Algo::Linear if v => {
            // allgatherv_intra_basic_default: coll/basic gatherv to 0 (blocking sends and
            // receives, empty blocks skipped), then c_coll bcast of 1 element of an indexed
            // type covering every block.
            super::gather_scatter::basic_gatherv(p, 0, me, blocks[me as usize], &blocks, prog);
            let total: u64 = blocks.iter().sum();
            let mut one = spec.as_kind(CollKind::Bcast, 0, total);
            one.elem_bytes = u32::try_from(total.max(1)).unwrap_or(u32::MAX);
            at.call(&one, prog)?;
        }
        Algo::Linear => {
            // allgather_intra_basic_linear: c_coll gather to 0, then c_coll bcast of
            // rcount * size elements
            at.call(&spec.as_kind(CollKind::Gather, 0, spec.bytes), prog)?;
            at.call(
                &spec.as_kind(CollKind::Bcast, 0, spec.bytes * u64::from(p)),
                prog,
            )?;
        }
        Algo::RecursiveDoubling if p.is_power_of_two() && !v => {
            // exchange the 2^k blocks gathered so far with rank ^ 2^k
            let mut d = 1;
            while d < p {
                let remote = me ^ d;
                prog.sendrecv(
                    me,
                    remote,
                    sum(me & !(d - 1), d),
                    remote,
                    sum(remote & !(d - 1), d),
                );
                d <<= 1;
            }
        }
        // allgather recursive doubling on a non-power-of-two size: "switching to bruck"
        Algo::Bruck | Algo::RecursiveDoubling => {
            // step d: send my first min(d, p-d) blocks to me-d, receive from me+d
            let mut d = 1;
            while d < p {
                let k = if d <= p >> 1 { d } else { p - d };
                let (to, from) = ((me + p - d) % p, (me + d) % p);
                prog.sendrecv(me, to, sum(me, k), from, sum(from, k));
                d <<= 1;
            }
        }
        Algo::NeighborExchange if p.is_multiple_of(2) => neighbor_exchange(p, me, &sum, prog),
        // neighbor exchange on an odd size: "switching to ring algorithm"
        Algo::Ring | Algo::NeighborExchange => {
            let (left, right) = ((me + p - 1) % p, (me + 1) % p);
            for i in 0..p - 1 {
                let (send_from, recv_from) = ((me + p - i) % p, (me + 2 * p - i - 1) % p);
                prog.sendrecv(me, right, sum(send_from, 1), left, sum(recv_from, 1));
            }
        }
        Algo::TwoProc => {
            if p != 2 {
                return Err(CollError::Refused(format!(
                    "{:?} two_procs on {p} ranks (MPI_ERR_UNSUPPORTED_OPERATION)",
                    spec.kind
                )));
            }
            prog.sendrecv(me, 1 - me, sum(me, 1), 1 - me, sum(1 - me, 1));
        }
        _ => return Err(at.unsupported(algo)),
    }
    Ok(())
}

/// neighborexchange: p/2 steps alternating between the two neighbours; the first moves
/// one block, the others the two blocks received in the previous step.
fn neighbor_exchange(p: u32, me: u32, sum: &dyn Fn(u32, u32) -> u64, prog: &mut Program) {
    let even = me.is_multiple_of(2);
    let (nb, mut recv_from, offset) = if even {
        ([(me + 1) % p, (me + p - 1) % p], [me, me], [2i64, -2])
    } else {
        (
            [(me + p - 1) % p, (me + 1) % p],
            [(me + p - 1) % p; 2],
            [-2i64, 2],
        )
    };
    prog.sendrecv(me, nb[0], sum(me, 1), nb[0], sum(nb[0], 1));
    let mut send_from = if even { me } else { recv_from[0] };
    for i in 1..p / 2 {
        let par = (i % 2) as usize;
        recv_from[par] =
            ((i64::from(recv_from[par]) + offset[par]).rem_euclid(i64::from(p))) as u32;
        prog.sendrecv(
            me,
            nb[par],
            sum(send_from, 2),
            nb[par],
            sum(recv_from[par], 2),
        );
        send_from = recv_from[par];
    }
}
