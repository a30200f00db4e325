//! Maps the ranks of one trace to fabric endpoints: in blocks (ranks of a node are
//! consecutive, as mpirun's default --map-by slot does) over all endpoints, a seeded
//! permutation of them, an explicit list, or the nodes of a locality class (seed 001's
//! same group / same island / different islands) on fabrics that define groups and islands.

use std::collections::BTreeMap;

use crate::config::{LocalityClass, Placement};
use crate::fabric::Locality;
use crate::prng::SplitMix64;

/// Endpoint of every rank. `endpoints` is the fabric's count (None: unbounded, then each
/// rank gets its own endpoint under `Linear`/`Random`); `locality` gives an endpoint's
/// group and island where the fabric defines them.
pub fn place(
    ranks: u32,
    endpoints: Option<u32>,
    locality: &dyn Fn(u32) -> Option<Locality>,
    placement: &Placement,
) -> Result<Vec<u32>, String> {
    let e = endpoints.unwrap_or(ranks.max(1));
    if e == 0 {
        return Err("the fabric has no endpoints".into());
    }
    let per = ranks.div_ceil(e).max(1);
    match placement {
        Placement::Linear { offset } => Ok((0..ranks).map(|r| (offset + r / per) % e).collect()),
        Placement::Random { seed } => {
            let mut perm: Vec<u32> = (0..e).collect();
            SplitMix64::new(*seed).shuffle(&mut perm);
            Ok((0..ranks).map(|r| perm[((r / per) % e) as usize]).collect())
        }
        Placement::Explicit(list) => {
            if list.len() != ranks as usize {
                return Err(format!(
                    "explicit placement lists {} endpoints for {ranks} ranks",
                    list.len()
                ));
            }
            if let Some((r, &bad)) = list.iter().enumerate().find(|(_, &x)| x >= e) {
                return Err(format!(
                    "rank {r} placed on endpoint {bad}, the fabric has {e}"
                ));
            }
            Ok(list.clone())
        }
        Placement::Locality { class, nodes, seed } => {
            let Some(count) = endpoints else {
                return Err("placement by locality needs a fabric with endpoints".into());
            };
            let chosen = nodes_of_class(count, locality, *class, *nodes, *seed)?;
            let per = ranks.div_ceil(*nodes).max(1);
            Ok((0..ranks)
                .map(|r| chosen[(r / per) as usize % chosen.len()])
                .collect())
        }
    }
}

/// `nodes` endpoints that form one placement of `class`, chosen with `seed`.
pub fn nodes_of_class(
    count: u32,
    locality: &dyn Fn(u32) -> Option<Locality>,
    class: LocalityClass,
    nodes: u32,
    seed: u64,
) -> Result<Vec<u32>, String> {
    let mut rng = SplitMix64::new(seed ^ 0x91AC_E000);
    // island → group → endpoints, in id order (BTreeMaps keep choices reproducible).
    let mut tree: BTreeMap<u32, BTreeMap<u32, Vec<u32>>> = BTreeMap::new();
    for e in 0..count {
        let Some(l) = locality(e) else {
            return Err("this fabric defines no groups or islands (placement by locality)".into());
        };
        tree.entry(l.island)
            .or_default()
            .entry(l.group)
            .or_default()
            .push(e);
    }
    if nodes == 0 {
        return Err("placement by locality needs at least one node".into());
    }
    let shuffled = |rng: &mut SplitMix64, v: &[u32]| {
        let mut v = v.to_vec();
        rng.shuffle(&mut v);
        v
    };
    let need = nodes as usize;
    match class {
        LocalityClass::SameGroup => {
            let groups: Vec<&Vec<u32>> = tree
                .values()
                .flat_map(|g| g.values())
                .filter(|g| g.len() >= need)
                .collect();
            if groups.is_empty() {
                return Err(format!("no group has {nodes} nodes (same_group)"));
            }
            let g = groups[rng.below(groups.len() as u64) as usize];
            let mut v = shuffled(&mut rng, g);
            v.truncate(need);
            Ok(v)
        }
        LocalityClass::SameIsland => {
            let islands: Vec<&BTreeMap<u32, Vec<u32>>> = tree
                .values()
                .filter(|i| i.len() >= 2 && i.values().map(Vec::len).sum::<usize>() >= need)
                .collect();
            if nodes < 2 || islands.is_empty() {
                return Err(format!(
                    "no island has {nodes} nodes in at least two groups (same_island needs >= 2 nodes)"
                ));
            }
            let island = islands[rng.below(islands.len() as u64) as usize];
            let groups: Vec<Vec<u32>> = island.values().map(|g| shuffled(&mut rng, g)).collect();
            Ok(round_robin(&mut rng, groups, need))
        }
        LocalityClass::DifferentIslands => {
            let total: usize = tree.values().flat_map(|i| i.values()).map(Vec::len).sum();
            if nodes < 2 || tree.len() < 2 || total < need {
                return Err(format!(
                    "needs at least 2 islands and {nodes} >= 2 nodes (different_islands)"
                ));
            }
            let islands: Vec<Vec<u32>> = tree
                .values()
                .map(|i| {
                    let all: Vec<u32> = i.values().flatten().copied().collect();
                    shuffled(&mut rng, &all)
                })
                .collect();
            Ok(round_robin(&mut rng, islands, need))
        }
    }
}

/// Takes one endpoint from each list in turn (lists in a random order) until `need`.
fn round_robin(rng: &mut SplitMix64, mut lists: Vec<Vec<u32>>, need: usize) -> Vec<u32> {
    rng.shuffle(&mut lists);
    let mut out = Vec::with_capacity(need);
    let mut at = 0;
    while out.len() < need {
        for l in &lists {
            if let Some(&e) = l.get(at) {
                out.push(e);
                if out.len() == need {
                    break;
                }
            }
        }
        at += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: u32) -> Option<Locality> {
        None
    }

    /// 2 islands × 2 groups × 4 endpoints, as the local test cluster.
    fn tree(e: u32) -> Option<Locality> {
        Some(Locality {
            group: e / 4,
            island: e / 8,
        })
    }

    #[test]
    fn linear_blocks_random_permutes_explicit_checks() {
        let lin = Placement::Linear { offset: 0 };
        assert_eq!(place(4, Some(2), &none, &lin).unwrap(), vec![0, 0, 1, 1]);
        let off = Placement::Linear { offset: 6 };
        assert_eq!(place(3, Some(8), &none, &off).unwrap(), vec![6, 7, 0]);
        assert_eq!(place(3, None, &none, &lin).unwrap(), vec![0, 1, 2]);
        let a = place(16, Some(16), &none, &Placement::Random { seed: 5 }).unwrap();
        let mut s = a.clone();
        s.sort_unstable();
        assert_eq!(s, (0..16).collect::<Vec<_>>());
        assert_eq!(
            a,
            place(16, Some(16), &none, &Placement::Random { seed: 5 }).unwrap()
        );
        assert_ne!(
            a,
            place(16, Some(16), &none, &Placement::Random { seed: 6 }).unwrap()
        );
        assert!(place(2, Some(4), &none, &Placement::Explicit(vec![0, 4])).is_err());
        assert!(place(2, Some(4), &none, &Placement::Explicit(vec![0])).is_err());
    }

    #[test]
    fn locality_classes_span_exactly_their_levels() {
        let span = |v: &[u32]| {
            let mut g: Vec<u32> = v.iter().map(|&e| e / 4).collect();
            let mut i: Vec<u32> = v.iter().map(|&e| e / 8).collect();
            g.sort_unstable();
            g.dedup();
            i.sort_unstable();
            i.dedup();
            (g.len(), i.len())
        };
        for seed in 0..50 {
            let p = |class, nodes| {
                let pl = Placement::Locality { class, nodes, seed };
                place(nodes * 2, Some(16), &tree, &pl).unwrap()
            };
            let g = p(LocalityClass::SameGroup, 4);
            assert_eq!(span(&g), (1, 1));
            assert_eq!(g[0], g[1]); // two ranks per node, in blocks
            let (groups, islands) = span(&p(LocalityClass::SameIsland, 4));
            assert!(groups >= 2 && islands == 1);
            assert_eq!(span(&p(LocalityClass::DifferentIslands, 2)).1, 2);
            let distinct = |v: Vec<u32>| {
                let mut v = v;
                v.dedup();
                v.len()
            };
            assert_eq!(distinct(p(LocalityClass::DifferentIslands, 8)), 8);
        }
        let too_many = Placement::Locality {
            class: LocalityClass::SameGroup,
            nodes: 5,
            seed: 0,
        };
        assert!(place(5, Some(16), &tree, &too_many)
            .unwrap_err()
            .contains("no group"));
        let flat = Placement::Locality {
            class: LocalityClass::SameGroup,
            nodes: 2,
            seed: 0,
        };
        assert!(place(2, Some(16), &none, &flat).is_err());
    }
}
