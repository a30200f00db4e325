//! Errors of a replay. Each names what the user must look at: the trace and row, or the
//! blocked ranks and the operations they wait on.

use std::fmt;

/// One rank that could not finish, and what it waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockedRank {
    pub trace: u32,
    pub rank: u32,
    /// Row of the operation it is blocked in, and a human description of it.
    pub row: usize,
    pub waiting_for: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ReplayError {
    /// A column set is malformed; names the trace (0-based, in the order given) and row.
    BadTrace {
        trace: u32,
        row: Option<usize>,
        message: String,
    },
    BadConfig(String),
    /// The trace cannot complete: ranks wait for messages that never come (or messages were
    /// never received). `unmatched` describes leftover messages.
    Deadlock {
        blocked: Vec<BlockedRank>,
        total_blocked: usize,
        unmatched: Vec<String>,
    },
    /// A collective could not be expanded into point-to-point steps.
    Collective {
        trace: u32,
        row: usize,
        message: String,
    },
    /// A trace or background job cannot sit where the scenario puts it (a locality class
    /// the fabric lacks, no free endpoints left, b too large for the fabric, endpoints
    /// beyond the fabric's).
    Placement(String),
    /// The caller asked the replay to stop (`replay_interruptible`).
    Interrupted,
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadTrace {
                trace,
                row: Some(row),
                message,
            } => {
                write!(f, "trace {trace}, row {row}: {message}")
            }
            Self::BadTrace {
                trace,
                row: None,
                message,
            } => write!(f, "trace {trace}: {message}"),
            Self::BadConfig(m) => write!(f, "invalid replay configuration: {m}"),
            Self::Deadlock {
                blocked,
                total_blocked,
                unmatched,
            } => {
                if *total_blocked > 0 {
                    write!(f, "deadlock: {total_blocked} rank(s) blocked forever: ")?;
                    for (i, b) in blocked.iter().enumerate() {
                        let sep = if i == 0 { "" } else { "; " };
                        write!(
                            f,
                            "{sep}trace {} rank {} at row {} waiting for {}",
                            b.trace, b.rank, b.row, b.waiting_for
                        )?;
                    }
                    if blocked.len() < *total_blocked {
                        write!(f, "; … and {} more", total_blocked - blocked.len())?;
                    }
                } else {
                    write!(f, "unmatched communication at the end of the trace")?;
                }
                if !unmatched.is_empty() {
                    write!(f, " | unmatched: {}", unmatched.join("; "))?;
                }
                Ok(())
            }
            Self::Collective {
                trace,
                row,
                message,
            } => {
                write!(f, "trace {trace}, row {row}: {message}")
            }
            Self::Placement(m) => f.write_str(m),
            Self::Interrupted => f.write_str("replay interrupted"),
        }
    }
}

impl std::error::Error for ReplayError {}
