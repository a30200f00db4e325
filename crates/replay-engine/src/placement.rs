//! Maps the ranks of one trace to fabric endpoints.

use crate::config::Placement;
use crate::prng::SplitMix64;

/// Endpoint of every rank. `endpoints` is the fabric's count (None: unbounded, then each
/// rank gets its own endpoint under `Linear`/`Random`).
pub fn place(
    ranks: u32,
    endpoints: Option<u32>,
    placement: &Placement,
) -> Result<Vec<u32>, String> {
    let e = endpoints.unwrap_or(ranks.max(1));
    if e == 0 {
        return Err("the fabric has no endpoints".into());
    }
    // Block placement: as many ranks per endpoint as needed to fit (ranks of a node are
    // consecutive, as mpirun's default --map-by slot does).
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_blocks_random_permutes_explicit_checks() {
        assert_eq!(
            place(4, Some(2), &Placement::Linear { offset: 0 }).unwrap(),
            vec![0, 0, 1, 1]
        );
        assert_eq!(
            place(3, Some(8), &Placement::Linear { offset: 6 }).unwrap(),
            vec![6, 7, 0]
        );
        assert_eq!(
            place(3, None, &Placement::Linear { offset: 0 }).unwrap(),
            vec![0, 1, 2]
        );
        let a = place(16, Some(16), &Placement::Random { seed: 5 }).unwrap();
        let mut s = a.clone();
        s.sort_unstable();
        assert_eq!(s, (0..16).collect::<Vec<_>>());
        assert_eq!(
            a,
            place(16, Some(16), &Placement::Random { seed: 5 }).unwrap()
        );
        assert_ne!(
            a,
            place(16, Some(16), &Placement::Random { seed: 6 }).unwrap()
        );
        assert!(place(2, Some(4), &Placement::Explicit(vec![0, 4])).is_err());
        assert!(place(2, Some(4), &Placement::Explicit(vec![0])).is_err());
    }
}
