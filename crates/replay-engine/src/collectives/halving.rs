//! Rabenseifner's building blocks as Open MPI 4.1 writes them (coll_base_allreduce.c
//! `allreduce_intra_redscat_allgather`, coll_base_reduce.c `reduce_intra_redscat_gather`):
//! fold the p - p' extra ranks in, recursive vector halving with distance doubling, and the
//! window sizes the later allgather / gather phases reuse in reverse.

use super::util::pof2_floor;
use super::Program;

/// Rank renumbering of the non-power-of-two fold: of the first 2r ranks only the even ones
/// take part (vrank = rank / 2), the others get vrank = rank - r.
#[derive(Debug, Clone, Copy)]
pub struct Fold {
    pub p: u32,
    pub pof2: u32,
    pub rem: u32,
}

impl Fold {
    pub fn new(p: u32) -> Self {
        let pof2 = pof2_floor(p);
        Fold {
            p,
            pof2,
            rem: p - pof2,
        }
    }

    /// Virtual rank, None for the odd ranks folded away.
    pub fn vrank(&self, rank: u32) -> Option<u32> {
        if rank < 2 * self.rem {
            (rank.is_multiple_of(2)).then_some(rank / 2)
        } else {
            Some(rank - self.rem)
        }
    }

    pub fn real(&self, v: u32) -> u32 {
        if v < self.rem {
            v * 2
        } else {
            v + self.rem
        }
    }

    /// Step 1: ranks < 2r swap halves with their neighbour (sendrecv), each reduces one
    /// half, and the odd one sends its reduced right half to the even one (counts in
    /// elements).
    pub fn fold_in(&self, rank: u32, count: u64, elem: u64, prog: &mut Program) {
        if rank >= 2 * self.rem {
            return;
        }
        let (lhalf, rhalf) = (count / 2, count - count / 2);
        if !rank.is_multiple_of(2) {
            prog.sendrecv(rank, rank - 1, lhalf * elem, rank - 1, rhalf * elem);
            prog.reduce(rhalf * elem);
            prog.send(rank - 1, rhalf * elem);
        } else {
            prog.sendrecv(rank, rank + 1, rhalf * elem, rank + 1, lhalf * elem);
            prog.reduce(lhalf * elem);
            prog.recv(rank + 1, rhalf * elem);
        }
    }
}

/// (recv count, send count) of each reduce-scatter step s (mask 2^s) for virtual rank v:
/// the lower rank of a pair keeps the left half (wsize / 2), the upper keeps the rest.
pub fn windows(count: u64, pof2: u32, v: u32) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut wsize = count;
    let mut mask = 1u32;
    while mask < pof2 {
        let (r, s) = if v < (v ^ mask) {
            (wsize / 2, wsize - wsize / 2)
        } else {
            (wsize - wsize / 2, wsize / 2)
        };
        out.push((r, s));
        wsize = r;
        mask <<= 1;
    }
    out
}

/// Step 2: reduce-scatter by recursive halving and distance doubling (sendrecv, then
/// reduce the received window).
pub fn reduce_scatter(fold: &Fold, v: u32, count: u64, elem: u64, prog: &mut Program) {
    let me = fold.real(v);
    for (s, &(r, snd)) in windows(count, fold.pof2, v).iter().enumerate() {
        let dest = fold.real(v ^ (1 << s));
        prog.sendrecv(me, dest, snd * elem, dest, r * elem);
        prog.reduce(r * elem);
    }
}

/// Step 3 of allreduce: allgather by recursive doubling with distance halving, the
/// exchanges of step 2 in reverse.
pub fn allgather_back(fold: &Fold, v: u32, count: u64, elem: u64, prog: &mut Program) {
    let me = fold.real(v);
    let w = windows(count, fold.pof2, v);
    for s in (0..w.len()).rev() {
        let dest = fold.real(v ^ (1 << s));
        prog.sendrecv(me, dest, w[s].0 * elem, dest, w[s].1 * elem);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_halve_down_to_one_pth() {
        let w = windows(1 << 20, 16, 5);
        assert_eq!(w.len(), 4);
        assert_eq!(w.iter().map(|x| x.1).sum::<u64>(), (1 << 20) - (1 << 16));
        assert_eq!(w[3].0, 1 << 16);
        let f = Fold::new(6);
        assert_eq!((f.pof2, f.rem), (4, 2));
        assert_eq!(f.vrank(1), None);
        assert_eq!(f.vrank(2), Some(1));
        assert_eq!(f.vrank(5), Some(3));
        assert_eq!(f.real(1), 2);
    }
}
