//! The fabric's endpoints no job has taken yet; background traces and background jobs draw
//! theirs from it, in the order the scenario declares them.

use crate::prng::SplitMix64;

/// Which free endpoints a background trace or job takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Take {
    /// A seeded random choice among the free endpoints (listed in ascending order).
    Random,
    /// The free endpoints from the lowest.
    Linear,
    /// These endpoints, free or not.
    Explicit(Vec<u32>),
}

pub(super) struct EndpointPool {
    /// The fabric's endpoint count; None: a contention-free model, where any id is a new
    /// endpoint and jobs take the ids after the highest taken one.
    limit: Option<u32>,
    taken: Vec<bool>,
    next_free: u32,
    rng: SplitMix64,
}

impl EndpointPool {
    pub(super) fn new(limit: Option<u32>, taken: &[u32], seed: u64) -> Self {
        let mut pool = Self {
            limit,
            taken: Vec::new(),
            next_free: 0,
            rng: SplitMix64::new(seed ^ 0xB6),
        };
        pool.mark(taken);
        pool
    }

    fn mark(&mut self, endpoints: &[u32]) {
        for &e in endpoints {
            let i = e as usize;
            if i >= self.taken.len() {
                self.taken.resize(i + 1, false);
            }
            self.taken[i] = true;
            self.next_free = self.next_free.max(e + 1);
        }
    }

    pub(super) fn is_taken(&self, e: u32) -> bool {
        self.taken.get(e as usize).copied().unwrap_or(false)
    }

    /// How many endpoints are taken.
    pub(super) fn taken_count(&self) -> usize {
        self.taken.iter().filter(|&&t| t).count()
    }

    /// The free endpoints in ascending order (none for a contention-free model).
    pub(super) fn free(&self) -> Vec<u32> {
        let limit = self.limit.unwrap_or(0);
        (0..limit).filter(|&e| !self.is_taken(e)).collect()
    }

    /// Takes `count` endpoints as `how` says; `what` names the taker in errors.
    pub(super) fn take(&mut self, count: u32, how: &Take, what: &str) -> Result<Vec<u32>, String> {
        let chosen = match (how, self.limit) {
            (Take::Explicit(list), _) => {
                if list.len() != count as usize {
                    return Err(format!(
                        "{what}: lists {} endpoints for {count} nodes",
                        list.len()
                    ));
                }
                if let Some(limit) = self.limit {
                    if let Some(&bad) = list.iter().find(|&&e| e >= limit) {
                        return Err(format!("{what}: endpoint {bad} is not in [0, {limit})"));
                    }
                }
                // Taken ones too: jobs may share nodes (Slurm's shared partitions,
                // --oversubscribe), and a user who lists endpoints means them.
                list.clone()
            }
            (_, None) => (self.next_free..self.next_free + count).collect(),
            (how, Some(_)) => {
                let free = self.free();
                if free.len() < count as usize {
                    return Err(format!(
                        "{what}: needs {count} free endpoints, the fabric has {} left",
                        free.len()
                    ));
                }
                if *how == Take::Linear {
                    free[..count as usize].to_vec()
                } else {
                    let mut v = free;
                    self.rng.shuffle(&mut v);
                    v.truncate(count as usize);
                    v.sort_unstable();
                    v
                }
            }
        };
        self.mark(&chosen);
        Ok(chosen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_take_only_free_endpoints_and_lists_are_checked_against_the_fabric() {
        let mut pool = EndpointPool::new(Some(8), &[0, 1], 7);
        assert_eq!(pool.take(2, &Take::Linear, "a").unwrap(), vec![2, 3]);
        let random = pool.take(3, &Take::Random, "b").unwrap();
        assert!(random.iter().all(|&e| (4..8).contains(&e)));
        assert!(random.windows(2).all(|w| w[0] < w[1]));
        let err = pool.take(2, &Take::Random, "c").unwrap_err();
        assert_eq!(err, "c: needs 2 free endpoints, the fabric has 1 left");
        assert_eq!(
            pool.take(1, &Take::Explicit(vec![2]), "d").unwrap(),
            vec![2]
        );
        let err = pool.take(1, &Take::Explicit(vec![9]), "e").unwrap_err();
        assert_eq!(err, "e: endpoint 9 is not in [0, 8)");
    }

    #[test]
    fn a_contention_free_fabric_hands_out_new_ids() {
        let mut pool = EndpointPool::new(None, &[0, 1, 2], 0);
        assert_eq!(pool.take(2, &Take::Random, "a").unwrap(), vec![3, 4]);
        assert_eq!(pool.take(1, &Take::Linear, "b").unwrap(), vec![5]);
    }
}
