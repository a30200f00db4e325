//! Names and Open MPI numeric ids of the coll/tuned algorithms (the `Algorithms:` comment
//! blocks of coll_tuned_decision_fixed.c and the coll_tuned_<coll>_algorithm MCA enums of
//! v4.1.4), and the parser of `--coll allreduce=ring,bcast=pipeline:segsize=128K` overrides.

use std::collections::HashMap;

use super::{Algo, AlgoParams, CollError, CollKind};

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
        // coll/basic (coll/tuned has no gatherv / scatterv in 4.1)
        CollKind::Gatherv | CollKind::Scatterv => &[Linear],
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

/// The collectives a `--coll` override names, by their canonical names (`kind_from_name`
/// also takes "broadcast" and "reducescatter").
pub const OVERRIDABLE: [(&str, CollKind); 12] = [
    ("allgather", CollKind::Allgather),
    ("allgatherv", CollKind::Allgatherv),
    ("allreduce", CollKind::Allreduce),
    ("alltoall", CollKind::Alltoall),
    ("alltoallv", CollKind::Alltoallv),
    ("barrier", CollKind::Barrier),
    ("bcast", CollKind::Bcast),
    ("gather", CollKind::Gather),
    ("reduce", CollKind::Reduce),
    ("reduce_scatter", CollKind::ReduceScatter),
    ("reduce_scatter_block", CollKind::ReduceScatterBlock),
    ("scatter", CollKind::Scatter),
];

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

/// The canonical name of `algo` (the first `algo_from_name` takes; a test checks they agree).
pub fn algo_name(algo: Algo) -> &'static str {
    use Algo::*;
    match algo {
        Linear => "linear",
        LinearSync => "linear_sync",
        LinearNb => "linear_nb",
        Binomial => "binomial",
        Knomial => "knomial",
        Binary => "binary",
        Pipeline => "pipeline",
        Chain => "chain",
        SplitBinary => "split_binary",
        ScatterAllgather => "scatter_allgather",
        ScatterAllgatherRing => "scatter_allgather_ring",
        Ring => "ring",
        SegmentedRing => "segmented_ring",
        RecursiveDoubling => "recursive_doubling",
        RecursiveHalving => "recursive_halving",
        Rabenseifner => "rabenseifner",
        Pairwise => "pairwise",
        Bruck => "bruck",
        NeighborExchange => "neighbor_exchange",
        TwoProc => "two_proc",
        DoubleRing => "double_ring",
        InOrderBinary => "in_order_binary",
        Nonoverlapping => "nonoverlapping",
        Butterfly => "butterfly",
        Tree => "tree",
    }
}

/// What an override of `kind` may name: its algorithms and ids (for error messages).
fn choices(kind: CollKind) -> String {
    let algos = algorithms(kind);
    let names: Vec<&str> = algos.iter().map(|&a| algo_name(a)).collect();
    format!(
        "one of {} (or its id 1..={}, 0 for the fixed rules)",
        names.join(", "),
        algos.len()
    )
}

/// A size with an optional binary suffix: 131072, 128K, 128KiB, 1M, 1MiB.
fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim().to_ascii_lowercase();
    let t = t
        .strip_suffix("ib")
        .or_else(|| t.strip_suffix('b'))
        .unwrap_or(&t);
    let (digits, unit) = match t.char_indices().last()? {
        (i, 'k') => (&t[..i], 1u64 << 10),
        (i, 'm') => (&t[..i], 1 << 20),
        (i, 'g') => (&t[..i], 1 << 30),
        _ => (t, 1),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(unit)
}

/// Applies "segsize=128K", "fanout=2", "max_requests=4", "radix=8" (the forced-mode MCA
/// parameters coll_tuned_<coll>_algorithm_segmentsize / _chain_fanout / _max_requests and
/// coll_tuned_bcast_knomial_radix).
fn apply_param(params: &mut AlgoParams, item: &str, coll: &str) -> Result<(), CollError> {
    let bad = |m: String| CollError::BadOverride(format!("{coll}: {m}"));
    let (key, value) = item
        .split_once('=')
        .ok_or_else(|| bad(format!("'{item}' is not KEY=VALUE")))?;
    let key = norm(key);
    let number = |v: &str| {
        v.trim()
            .parse::<u32>()
            .map_err(|_| bad(format!("{key} must be a whole number, got '{}'", v.trim())))
    };
    match key.as_str() {
        "segsize" | "segmentsize" | "segment_size" => {
            params.segsize = parse_size(value).ok_or_else(|| {
                bad(format!(
                    "segsize must be a size in bytes (131072, 128K), got '{value}'"
                ))
            })?;
        }
        "fanout" | "chain_fanout" | "tree_fanout" => params.fanout = number(value)?,
        "max_requests" => params.max_requests = number(value)?,
        "radix" => {
            params.radix = number(value)?;
            if params.radix < 2 {
                return Err(bad("radix must be >= 2".into()));
            }
        }
        _ => {
            return Err(bad(format!(
                "unknown parameter '{key}' (segsize, fanout, max_requests, radix)"
            )))
        }
    }
    Ok(())
}

/// Parse "allreduce=ring,bcast=pipeline:segsize=128K" (also "allreduce=4"): comma-separated
/// COLLECTIVE=ALGORITHM[:KEY=VALUE...] items; id 0 leaves the collective to the fixed
/// rules. A forced algorithm gets Open MPI's forced-mode defaults (`AlgoParams::FORCED`)
/// unless a parameter says otherwise.
pub fn parse_overrides(text: &str) -> Result<HashMap<CollKind, (Algo, AlgoParams)>, CollError> {
    let mut out = HashMap::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (coll, spec) = item.split_once('=').ok_or_else(|| {
            CollError::BadOverride(format!("'{item}' is not COLLECTIVE=ALGORITHM"))
        })?;
        let kind = kind_from_name(coll).ok_or_else(|| {
            let known: Vec<&str> = OVERRIDABLE.iter().map(|k| k.0).collect();
            CollError::BadOverride(format!(
                "unknown collective '{}': one of {}",
                coll.trim(),
                known.join(", ")
            ))
        })?;
        let coll = coll.trim();
        let mut parts = spec.split(':');
        let alg = parts.next().unwrap_or("").trim();
        let algo = if let Ok(id) = alg.parse::<u8>() {
            if id == 0 {
                out.remove(&kind);
                continue;
            }
            algo_from_id(kind, id).ok_or_else(|| {
                CollError::BadOverride(format!("{coll}: no algorithm id {id}; {}", choices(kind)))
            })?
        } else {
            match algo_from_name(alg).filter(|&a| id_of(kind, a).is_some()) {
                Some(algo) => algo,
                None => {
                    return Err(CollError::BadOverride(format!(
                        "{coll}: no algorithm '{alg}' in Open MPI 4.1 coll/tuned; {}",
                        choices(kind)
                    )))
                }
            }
        };
        let mut params = AlgoParams::FORCED;
        for p in parts {
            apply_param(&mut params, p, coll.trim())?;
        }
        out.insert(kind, (algo, params));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_and_ids() {
        let m = parse_overrides("allreduce=ring, bcast=6,alltoall=modified-bruck").unwrap();
        assert_eq!(m[&CollKind::Allreduce].0, Algo::Ring);
        assert_eq!(m[&CollKind::Bcast], (Algo::Binomial, AlgoParams::FORCED));
        assert_eq!(m[&CollKind::Alltoall].0, Algo::Bruck);
        assert_eq!(
            parse_overrides("allreduce=6").unwrap()[&CollKind::Allreduce].0,
            Algo::Rabenseifner
        );
        let m = parse_overrides("bcast=pipeline:segsize=128K,alltoall=linear_sync:max_requests=3")
            .unwrap();
        assert_eq!(m[&CollKind::Bcast].1.segsize, 131072);
        assert_eq!(m[&CollKind::Bcast].1.fanout, 4);
        assert_eq!(m[&CollKind::Alltoall].1.max_requests, 3);
        let m = parse_overrides("bcast=chain:fanout=2:segsize=1MiB:radix=3").unwrap();
        assert_eq!(
            m[&CollKind::Bcast].1,
            AlgoParams {
                segsize: 1 << 20,
                fanout: 2,
                max_requests: 0,
                radix: 3
            }
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
        assert!(parse_overrides("bcast=pipeline:segsize=lots").is_err());
        assert!(parse_overrides("bcast=pipeline:depth=3").is_err());
        assert!(parse_overrides("bcast=knomial:radix=1").is_err());
    }

    #[test]
    fn errors_name_the_collective_and_its_algorithms() {
        let err = parse_overrides("allreduce=bogus").unwrap_err().to_string();
        assert!(err.contains("allreduce: no algorithm 'bogus'"), "{err}");
        assert!(err.contains("ring, segmented_ring, rabenseifner"), "{err}");
        let err = parse_overrides("bcast=pairwise").unwrap_err().to_string();
        assert!(err.contains("bcast: no algorithm 'pairwise'"), "{err}");
        let err = parse_overrides("bcast=10").unwrap_err().to_string();
        assert!(err.contains("id 1..=9"), "{err}");
        let err = parse_overrides("allfoo=ring").unwrap_err().to_string();
        assert!(err.contains("'allfoo': one of allgather,"), "{err}");
    }

    #[test]
    fn canonical_names_parse_back() {
        for (name, kind) in OVERRIDABLE {
            assert_eq!(kind_from_name(name), Some(kind));
            for &algo in algorithms(kind) {
                assert_eq!(algo_from_name(algo_name(algo)), Some(algo));
            }
        }
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
