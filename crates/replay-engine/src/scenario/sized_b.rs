//! Background jobs sized from a background utilisation b (seed 001 §5.1): other users' jobs
//! of at least two nodes occupying round(b · N_t) of the fabric's N_t endpoints.
//!
//! - **Sizes**: drawn uniformly from the given job sizes (a snapshot of the real queue's
//!   jobs with >= 2 nodes, or the caller's defaults) until they hold round(b · N_t) nodes;
//!   the last one is cut to fit, and a draw that would leave a single node behind, which
//!   could not communicate, takes it too.
//! - **Where**: `Scattered`: the free endpoints in a seeded random order. `Around`: the free
//!   endpoints by distance from the foreground: first those in the foreground's groups
//!   (leaf switches), then in the rest of its islands, then the others; groups in a seeded
//!   random order within each tier, the endpoints of a group together. Jobs take consecutive
//!   runs of that order — what Slurm's topology-aware best fit does when the foreground's
//!   switches are the partly used ones (seed 001 §4.1).

use std::collections::{BTreeMap, BTreeSet};

use super::pool::EndpointPool;
use crate::fabric::Fabric;
use crate::prng::SplitMix64;

/// How the sized jobs sit on the free endpoints (see the module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spread {
    Scattered,
    Around,
}

/// Background traffic sized from b; every job's nodes run the same generator.
#[derive(Debug, Clone, PartialEq)]
pub struct SizedFromB {
    pub b: f64,
    /// Job sizes to draw from (each >= 2).
    pub job_sizes: Vec<u32>,
    pub spread: Spread,
}

impl SizedFromB {
    /// round(b · N_t), the background nodes b asks for (Python's and numpy's rounding: half
    /// to even), or why they cannot be placed beside the `taken` endpoints.
    pub(super) fn nodes(
        &self,
        endpoints: Option<u32>,
        model: &str,
        taken: usize,
    ) -> Result<u32, String> {
        let Some(total) = endpoints else {
            return Err(format!(
                "background sized from b needs a fabric with a fixed number of endpoints \
                 (N_t), not the contention-free {model}"
            ));
        };
        let target = (self.b * f64::from(total)).round_ties_even() as u32;
        let free = (total as usize).saturating_sub(taken) as u32;
        if target > free {
            let largest = (f64::from(free) / f64::from(total) * 1e4).floor() / 1e4;
            return Err(format!(
                "background sized from b = {}: b · N_t = {target} background nodes (N_t = {total} endpoints) but only \
                 {free} are free ({taken} taken by the replayed job and any other background): \
                 b <= {free}/{total} ({largest}) fits",
                self.b
            ));
        }
        Ok(target)
    }

    /// The endpoints of each sized job, from the endpoints `pool` leaves free, around the
    /// `foreground` ones.
    pub(super) fn jobs(
        &self,
        fabric: &dyn Fabric,
        model: &str,
        foreground: &[u32],
        pool: &EndpointPool,
        seed: u64,
    ) -> Result<Vec<Vec<u32>>, String> {
        if !(0.0..=1.0).contains(&self.b) {
            return Err(format!(
                "background sized from b = {}: b must be in [0, 1]",
                self.b
            ));
        }
        if self.job_sizes.is_empty() || self.job_sizes.iter().any(|&s| s < 2) {
            return Err(
                "background job sizes must be given and >= 2 nodes (b counts only those)".into(),
            );
        }
        let target = self.nodes(fabric.endpoints(), model, pool.taken_count())?;
        let mut rng = SplitMix64::new(seed ^ 0xB0B);
        let mut order = pool.free();
        match self.spread {
            Spread::Scattered => rng.shuffle(&mut order),
            Spread::Around => order = around(fabric, foreground, order, &mut rng),
        }
        let mut jobs = Vec::new();
        let mut at = 0usize;
        for size in draw_sizes(target, &self.job_sizes, &mut rng)? {
            jobs.push(order[at..at + size as usize].to_vec());
            at += size as usize;
        }
        Ok(jobs)
    }
}

/// Job sizes summing to exactly `total` nodes, each >= 2.
fn draw_sizes(total: u32, sizes: &[u32], rng: &mut SplitMix64) -> Result<Vec<u32>, String> {
    if total == 1 {
        return Err(
            "background sized from b: b · N_t rounds to 1 node, and a background job needs at least 2"
                .into(),
        );
    }
    let mut out = Vec::new();
    let mut left = total;
    while left > 0 {
        let mut size = sizes[rng.below(sizes.len() as u64) as usize].min(left);
        if left - size == 1 {
            size += 1; // never leave a single node behind
        }
        out.push(size);
        left -= size;
    }
    Ok(out)
}

/// The `free` endpoints nearest to the `foreground` ones first (module comment); on a
/// fabric without groups, in a seeded random order.
fn around(
    fabric: &dyn Fabric,
    foreground: &[u32],
    mut free: Vec<u32>,
    rng: &mut SplitMix64,
) -> Vec<u32> {
    if free.iter().any(|&e| fabric.locality(e).is_none()) {
        rng.shuffle(&mut free);
        return free;
    }
    let place = |e: u32| fabric.locality(e).expect("checked above");
    let fg_groups: BTreeSet<u32> = foreground
        .iter()
        .filter_map(|&e| fabric.locality(e))
        .map(|l| l.group)
        .collect();
    let fg_islands: BTreeSet<u32> = foreground
        .iter()
        .filter_map(|&e| fabric.locality(e))
        .map(|l| l.island)
        .collect();
    let mut members: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for e in free {
        members.entry(place(e).group).or_default().push(e);
    }
    let mut tiers: [Vec<u32>; 3] = Default::default();
    for (&g, nodes) in &members {
        let tier = if fg_groups.contains(&g) {
            0
        } else if fg_islands.contains(&place(nodes[0]).island) {
            1
        } else {
            2
        };
        tiers[tier].push(g);
    }
    let mut order = Vec::new();
    for tier in &mut tiers {
        rng.shuffle(tier);
        for g in tier.iter() {
            order.extend_from_slice(&members[g]);
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_sum_to_the_target_and_never_leave_one_node() {
        let mut rng = SplitMix64::new(3);
        for total in [0u32, 2, 3, 5, 17, 64, 980] {
            let sizes = draw_sizes(total, &[2, 4, 8, 16, 32, 64], &mut rng).unwrap();
            assert_eq!(sizes.iter().sum::<u32>(), total);
            assert!(sizes.iter().all(|&s| s >= 2));
        }
        assert!(draw_sizes(1, &[2], &mut rng).is_err());
    }

    #[test]
    fn b_counts_endpoints_rounded_half_to_even() {
        let spec = SizedFromB {
            b: 0.5,
            job_sizes: vec![2],
            spread: Spread::Scattered,
        };
        assert_eq!(spec.nodes(Some(5), "m", 0).unwrap(), 2); // 2.5 -> 2, as Python's round
        let err = SizedFromB {
            b: 1.0,
            ..spec.clone()
        }
        .nodes(Some(10), "m", 4)
        .unwrap_err();
        assert!(
            err.contains("10 background nodes") && err.contains("only 6 are free"),
            "{err}"
        );
        assert!(spec
            .nodes(None, "alpha_beta", 0)
            .unwrap_err()
            .contains("contention-free alpha_beta"));
    }
}
