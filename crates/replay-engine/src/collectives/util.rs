//! Small helpers shared by the program builders: Open MPI's block and segment arithmetic
//! (coll_base_functions.h: COLL_BASE_COMPUTE_BLOCKCOUNT, COLL_BASE_COMPUTED_SEGCOUNT), bit
//! helpers (opal/util/bit_ops.h; coll_base_util.c: ompi_mirror_perm, ompi_rounddown).

/// Largest power of two <= n (n >= 1).
pub fn pof2_floor(n: u32) -> u32 {
    debug_assert!(n >= 1);
    1 << (31 - n.leading_zeros())
}

/// Smallest power of two >= n (opal_next_poweroftwo_inclusive).
pub fn pof2_ceil(n: u32) -> u32 {
    n.max(1).next_power_of_two()
}

/// Open MPI's split of `count` elements into `p` blocks: the first `count % p` ("early")
/// blocks carry one element more than the others (COLL_BASE_COMPUTE_BLOCKCOUNT).
pub fn block_counts(count: u64, p: u32) -> Vec<u64> {
    let p64 = u64::from(p);
    let late = count / p64;
    let split = count % p64;
    (0..p64)
        .map(|i| if i < split { late + 1 } else { late })
        .collect()
}

/// Elements per segment for a segment size in bytes (COLL_BASE_COMPUTED_SEGCOUNT): only
/// segments that hold at least one element and are smaller than the message segment it.
pub fn seg_count(segsize: u64, elem: u64, count: u64) -> u64 {
    if segsize >= elem && segsize < elem.saturating_mul(count) {
        let mut segcount = segsize / elem;
        if segsize % elem > elem / 2 {
            segcount += 1;
        }
        segcount.max(1)
    } else {
        count
    }
}

/// Element counts of the segments of a `count`-element message cut into `segcount` pieces
/// (the last one shorter). A 0-element message still travels as one (empty) segment.
pub fn segments(count: u64, segcount: u64) -> Vec<u64> {
    if count == 0 || segcount == 0 {
        return vec![count];
    }
    let n = count.div_ceil(segcount);
    (0..n)
        .map(|i| {
            if i + 1 == n {
                count - i * segcount
            } else {
                segcount
            }
        })
        .collect()
}

/// ompi_mirror_perm: `x` with its low `nbits` bits reversed.
pub fn mirror_perm(x: u32, nbits: u32) -> u32 {
    if nbits == 0 {
        return 0;
    }
    (x & ((1u64 << nbits) - 1) as u32).reverse_bits() >> (32 - nbits)
}

/// ompi_rounddown: `num` rounded down to a multiple of `factor`.
pub fn rounddown(num: u32, factor: u32) -> u32 {
    num / factor * factor
}

/// (rank - root) mod p: the rank as seen by algorithms written for root 0.
pub fn vrank(rank: u32, root: u32, p: u32) -> u32 {
    (rank + p - root % p) % p
}

/// Inverse of [`vrank`].
pub fn real(v: u32, root: u32, p: u32) -> u32 {
    (v + root) % p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_follow_open_mpi_early_late_split() {
        assert_eq!(block_counts(10, 4), vec![3, 3, 2, 2]);
        assert_eq!(block_counts(8, 16).iter().sum::<u64>(), 8);
        assert_eq!(block_counts(8, 16)[7], 1);
        assert_eq!(block_counts(8, 16)[8], 0);
    }

    #[test]
    fn segmentation_matches_computed_segcount() {
        assert_eq!(seg_count(0, 4, 100), 100);
        assert_eq!(seg_count(1024, 4, 1000), 256);
        assert_eq!(seg_count(8192, 1, 1000), 1000);
        assert_eq!(segments(1000, 256), vec![256, 256, 256, 232]);
        assert_eq!(segments(0, 5), vec![0]);
    }

    #[test]
    fn mirror_and_rounddown() {
        assert_eq!(mirror_perm(1, 3), 4);
        assert_eq!(mirror_perm(6, 3), 3);
        assert_eq!(mirror_perm(5, 4), 10);
        assert_eq!(rounddown(14, 3), 12);
        assert_eq!(rounddown(10, 4), 8);
    }

    #[test]
    fn powers_of_two() {
        assert_eq!(pof2_floor(16), 16);
        assert_eq!(pof2_floor(17), 16);
        assert_eq!(pof2_ceil(17), 32);
    }
}
