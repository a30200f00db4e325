//! Names and Open MPI numeric ids of the coll/tuned algorithms (the `Algorithms:` comment
//! blocks of coll_tuned_decision_fixed.c and the coll_tuned_<coll>_algorithm MCA enums of
//! v4.1), and the parser of `--coll allreduce=ring,bcast=6` overrides.

use std::collections::HashMap;

use super::{Algo, CollError, CollKind};

/// Open MPI's algorithm list of each collective, in id order (id = index + 1; id 0 means
/// "let the fixed rules decide").
pub fn algorithms(kind: CollKind) -> &'static [Algo] {
    use Algo::*;
    match kind {
        CollKind::Allreduce => &[
            Linear,
            Nonoverlapping,
            RecursiveDoubling,
            Ring,
            SegmentedRing,
            Rabenseifner,
        ],
        CollKind::Alltoall => &[Linear, Pairwise, Bruck, LinearSync, TwoProc],
        CollKind::Alltoallv => &[Linear, Pairwise],
        CollKind::Barrier => &[Linear, DoubleRing, RecursiveDoubling, Bruck, TwoProc, Tree],
        CollKind::Bcast => &[
            Linear,
            Chain,
            Pipeline,
            SplitBinary,
            Binary,
            Binomial,
            Knomial,
            ScatterAllgather,
            ScatterAllgatherRing,
        ],
        CollKind::Reduce => &[
            Linear,
            Chain,
            Pipeline,
            Binary,
            Binomial,
            InOrderBinary,
            Rabenseifner,
        ],
        CollKind::ReduceScatter => &[Nonoverlapping, RecursiveHalving, Ring, Butterfly],
        CollKind::ReduceScatterBlock => &[Linear, RecursiveDoubling, RecursiveHalving, Butterfly],
        CollKind::Allgather => &[
            Linear,
            Bruck,
            RecursiveDoubling,
            Ring,
            NeighborExchange,
            TwoProc,
        ],
        CollKind::Allgatherv => &[Linear, Bruck, Ring, NeighborExchange, TwoProc],
        CollKind::Gather => &[Linear, Binomial, LinearSync],
        CollKind::Scatter => &[Linear, Binomial, LinearNb],
    }
}

/// The algorithm with Open MPI id `id` (1-based) for `kind`.
pub fn algo_from_id(kind: CollKind, id: u8) -> Option<Algo> {
    algorithms(kind)
        .get(usize::from(id).checked_sub(1)?)
        .copied()
}

/// Open MPI id of `algo` for `kind`, if the collective has it.
pub fn id_of(kind: CollKind, algo: Algo) -> Option<u8> {
    algorithms(kind)
        .iter()
        .position(|&a| a == algo)
        .map(|i| i as u8 + 1)
}

fn norm(s: &str) -> String {
    s.trim().to_ascii_lowercase().replace('-', "_")
}

pub fn kind_from_name(name: &str) -> Option<CollKind> {
    Some(match norm(name).as_str() {
        "bcast" | "broadcast" => CollKind::Bcast,
        "reduce" => CollKind::Reduce,
        "allreduce" => CollKind::Allreduce,
        "alltoall" => CollKind::Alltoall,
        "alltoallv" => CollKind::Alltoallv,
        "allgather" => CollKind::Allgather,
        "allgatherv" => CollKind::Allgatherv,
        "gather" => CollKind::Gather,
        "scatter" => CollKind::Scatter,
        "reduce_scatter" | "reducescatter" => CollKind::ReduceScatter,
        "reduce_scatter_block" => CollKind::ReduceScatterBlock,
        "barrier" => CollKind::Barrier,
        _ => return None,
    })
}

pub fn algo_from_name(name: &str) -> Option<Algo> {
    use Algo::*;
    Some(match norm(name).as_str() {
        "linear" | "basic_linear" | "default" => Linear,
        "linear_sync" => LinearSync,
        "linear_nb" => LinearNb,
        "binomial" => Binomial,
        "knomial" => Knomial,
        "binary" | "binary_tree" | "bintree" => Binary,
        "pipeline" => Pipeline,
        "chain" => Chain,
        "split_binary" | "split_binary_tree" | "split_bintree" => SplitBinary,
        "scatter_allgather" => ScatterAllgather,
        "scatter_allgather_ring" => ScatterAllgatherRing,
        "ring" => Ring,
        "segmented_ring" => SegmentedRing,
        "recursive_doubling" => RecursiveDoubling,
        "recursive_halving" => RecursiveHalving,
        "rabenseifner" | "redscat_allgather" | "redscat_gather" => Rabenseifner,
        "pairwise" => Pairwise,
        "bruck" | "modified_bruck" => Bruck,
        "neighbor_exchange" | "neighbour_exchange" | "neighbor" => NeighborExchange,
        "two_proc" | "two_procs" => TwoProc,
        "double_ring" => DoubleRing,
        "in_order_binary" => InOrderBinary,
        "nonoverlapping" | "non_overlapping" => Nonoverlapping,
        "butterfly" => Butterfly,
        "tree" => Tree,
        _ => return None,
    })
}

/// Parse "allreduce=ring,bcast=binomial" (also "allreduce=4"): comma-separated
/// collective=algorithm pairs; id 0 leaves the collective to the fixed rules.
pub fn parse_overrides(text: &str) -> Result<HashMap<CollKind, Algo>, CollError> {
    let mut out = HashMap::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (coll, alg) = item.split_once('=').ok_or_else(|| {
            CollError::BadOverride(format!("'{item}' is not COLLECTIVE=ALGORITHM"))
        })?;
        let kind = kind_from_name(coll).ok_or_else(|| {
            CollError::BadOverride(format!("unknown collective '{}'", coll.trim()))
        })?;
        let alg = alg.trim();
        let algo = if let Ok(id) = alg.parse::<u8>() {
            if id == 0 {
                out.remove(&kind);
                continue;
            }
            algo_from_id(kind, id).ok_or_else(|| {
                let max = algorithms(kind).len();
                CollError::BadOverride(format!("{coll}: algorithm id {id} not in 0..={max}"))
            })?
        } else {
            let algo = algo_from_name(alg)
                .ok_or_else(|| CollError::BadOverride(format!("unknown algorithm '{alg}'")))?;
            if id_of(kind, algo).is_none() {
                return Err(CollError::BadOverride(format!(
                    "{coll} has no algorithm '{alg}' in Open MPI 4.1 coll/tuned"
                )));
            }
            algo
        };
        out.insert(kind, algo);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_and_ids() {
        let m = parse_overrides("allreduce=ring, bcast=6,alltoall=modified-bruck").unwrap();
        assert_eq!(m[&CollKind::Allreduce], Algo::Ring);
        assert_eq!(m[&CollKind::Bcast], Algo::Binomial);
        assert_eq!(m[&CollKind::Alltoall], Algo::Bruck);
        assert_eq!(
            parse_overrides("allreduce=6").unwrap()[&CollKind::Allreduce],
            Algo::Rabenseifner
        );
        assert!(parse_overrides("allreduce=0").unwrap().is_empty());
        assert!(parse_overrides("").unwrap().is_empty());
    }

    #[test]
    fn rejects_bad_overrides() {
        assert!(parse_overrides("allreduce").is_err());
        assert!(parse_overrides("allreduce=7").is_err());
        assert!(parse_overrides("allreduce=pairwise").is_err());
        assert!(parse_overrides("allfoo=ring").is_err());
        assert!(parse_overrides("bcast=warp").is_err());
    }

    #[test]
    fn ids_round_trip() {
        for kind in [
            CollKind::Bcast,
            CollKind::Allreduce,
            CollKind::Barrier,
            CollKind::Gather,
        ] {
            for (i, &a) in algorithms(kind).iter().enumerate() {
                assert_eq!(id_of(kind, a), Some(i as u8 + 1));
                assert_eq!(algo_from_id(kind, i as u8 + 1), Some(a));
            }
        }
    }
}
