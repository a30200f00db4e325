//! Communication-free timeline: every rank runs its calls in trace order, keeping each
//! call's captured duration and the compute gap before it (scaled). It is the baseline the
//! network models are compared against, and the engine's smallest complete entry point.

use std::fmt;

/// Errors a malformed column set can produce; each names the offending row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimelineError {
    LengthMismatch {
        ranks: usize,
        starts: usize,
        ends: usize,
    },
    NegativeDuration {
        row: usize,
    },
    OutOfOrder {
        row: usize,
        rank: u32,
    },
    BadScale,
}

impl fmt::Display for TimelineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::LengthMismatch {
                ranks,
                starts,
                ends,
            } => write!(
                f,
                "column lengths differ: rank={ranks}, t_start_ns={starts}, t_end_ns={ends}"
            ),
            Self::NegativeDuration { row } => write!(f, "row {row}: t_end_ns < t_start_ns"),
            Self::OutOfOrder { row, rank } => {
                write!(
                    f,
                    "row {row}: rank {rank} call starts before its previous call ended"
                )
            }
            Self::BadScale => write!(f, "compute_scale must be finite and >= 0"),
        }
    }
}

impl std::error::Error for TimelineError {}

/// Replays calls given as columns (one row per call, rows of one rank in trace order).
/// Returns the replayed end time (ns, from 0) of every row.
///
/// The first call of each rank starts at 0 + its scaled lead-in gap is ignored, because
/// the time before MPI_Init is not the application's.
pub fn replay_local(
    rank: &[u32],
    t_start_ns: &[i64],
    t_end_ns: &[i64],
    compute_scale: f64,
) -> Result<Vec<i64>, TimelineError> {
    if rank.len() != t_start_ns.len() || rank.len() != t_end_ns.len() {
        return Err(TimelineError::LengthMismatch {
            ranks: rank.len(),
            starts: t_start_ns.len(),
            ends: t_end_ns.len(),
        });
    }
    if !compute_scale.is_finite() || compute_scale < 0.0 {
        return Err(TimelineError::BadScale);
    }
    // Per rank: (captured end of previous call, replayed end of previous call).
    let nranks = rank.iter().map(|&r| r as usize + 1).max().unwrap_or(0);
    let mut last: Vec<Option<(i64, i64)>> = vec![None; nranks];
    let mut out = Vec::with_capacity(rank.len());
    for row in 0..rank.len() {
        let (s, e, r) = (t_start_ns[row], t_end_ns[row], rank[row]);
        if e < s {
            return Err(TimelineError::NegativeDuration { row });
        }
        let start = match last[r as usize] {
            None => 0,
            Some((prev_captured_end, prev_replayed_end)) => {
                if s < prev_captured_end {
                    return Err(TimelineError::OutOfOrder { row, rank: r });
                }
                let gap = (s - prev_captured_end) as f64 * compute_scale;
                prev_replayed_end + gap.round() as i64
            }
        };
        let end = start + (e - s);
        last[r as usize] = Some((e, end));
        out.push(end);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_durations_and_scales_gaps() {
        // rank 0: call [100,150), gap 50, call [200,210); rank 1: one call [5,25).
        let ends = replay_local(&[0, 1, 0], &[100, 5, 200], &[150, 25, 210], 2.0).unwrap();
        assert_eq!(ends, vec![50, 20, 50 + 100 + 10]);
    }

    #[test]
    fn zero_scale_is_communication_only() {
        let ends = replay_local(&[0, 0], &[0, 1000], &[10, 1010], 0.0).unwrap();
        assert_eq!(ends, vec![10, 20]);
    }

    #[test]
    fn rejects_malformed_columns() {
        assert!(matches!(
            replay_local(&[0], &[1, 2], &[3], 1.0),
            Err(TimelineError::LengthMismatch { .. })
        ));
        assert_eq!(
            replay_local(&[0], &[5], &[4], 1.0),
            Err(TimelineError::NegativeDuration { row: 0 })
        );
        assert_eq!(
            replay_local(&[0, 0], &[0, 5], &[10, 20], 1.0),
            Err(TimelineError::OutOfOrder { row: 1, rank: 0 })
        );
        assert_eq!(
            replay_local(&[0], &[0], &[1], f64::NAN),
            Err(TimelineError::BadScale)
        );
    }
}
