//! End-of-replay checks (deadlock, unmatched messages) and per-iteration latencies.

use super::core::Engine;
use super::messages::USER;
use super::ranks::RState;
use crate::error::{BlockedRank, ReplayError};
use crate::ops::Op;

const LISTED: usize = 16;

impl Engine {
    fn describe_row(&self, r: u32) -> String {
        let rank = &self.ranks[r as usize];
        let Some(row) = rank.rows.current_opt() else {
            return "(no row)".into();
        };
        let op = Op::from_code(row.op).unwrap_or(Op::Other);
        let mut text = format!("{} (seq {}", op.name(), row.seq);
        if op.collective().is_some() {
            if let Some(run) = &rank.coll {
                text += &format!(
                    ", comm {}, call {} of {}",
                    run.comm,
                    run.pc.min(run.prog.instrs.len()),
                    run.prog.instrs.len()
                );
            }
        } else {
            text += &format!(", peer {}, tag {}, comm {}", row.peer, row.tag, row.comm);
            if row.request >= 0 {
                text += &format!(", request {}", row.request);
            }
        }
        if let RState::Blocked { pending, .. } = rank.state {
            text += &format!(", {pending} request(s) pending");
        }
        if rank.state == RState::Gathered {
            text += ", waiting for the other members to enter";
        }
        text + ")"
    }

    fn describe_msg(&self, m: u32, what: &str) -> String {
        let msg = &self.msgs[m];
        let (s, d) = (&self.ranks[msg.src as usize], &self.ranks[msg.dst as usize]);
        let kind = if msg.inst == USER {
            format!("tag {}", msg.tag)
        } else {
            format!("collective #{}", msg.inst)
        };
        format!(
            "{what} trace {} rank {} -> rank {}, {kind}, comm {}, {} B",
            s.job, s.local, d.local, msg.comm, msg.bytes
        )
    }

    pub(super) fn check_complete(&self) -> Result<(), ReplayError> {
        // Background traces are cut off when the foreground ends: only foreground ranks
        // must have finished and matched everything.
        let checked = |r: u32| self.jobs[self.ranks[r as usize].job as usize].foreground;
        let stuck: Vec<u32> = (0..self.ranks.len() as u32)
            .filter(|&r| checked(r) && self.ranks[r as usize].state != RState::Done)
            .collect();
        let mut unmatched = Vec::new();
        for (dst, q) in self.matching.unexpected.iter().enumerate() {
            if !checked(dst as u32) {
                continue;
            }
            unmatched.extend(
                q.iter()
                    .map(|&m| self.describe_msg(m, "send never received:")),
            );
        }
        for (dst, q) in self.matching.posted.iter().enumerate() {
            if !checked(dst as u32) {
                continue;
            }
            for p in q {
                let rank = &self.ranks[dst];
                let src = if p.src < 0 {
                    "ANY_SOURCE".to_string()
                } else {
                    self.ranks[p.src as usize].local.to_string()
                };
                unmatched.push(format!(
                    "receive never matched: trace {} rank {} from {src}, tag {}, comm {}",
                    rank.job, rank.local, p.tag, p.comm
                ));
            }
        }
        let mut waiting: Vec<_> = self
            .matching
            .coll_waiting()
            .filter(|(k, _)| checked(k.0))
            .collect();
        waiting.sort_unstable_by_key(|(k, _)| *k);
        for (_, entries) in waiting {
            for e in entries {
                if !e.is_recv {
                    unmatched.push(self.describe_msg(e.id, "collective message never received:"));
                }
            }
        }
        if stuck.is_empty() && unmatched.is_empty() {
            return Ok(());
        }
        let total_unmatched = unmatched.len();
        unmatched.truncate(LISTED);
        if total_unmatched > LISTED {
            unmatched.push(format!("… and {} more", total_unmatched - LISTED));
        }
        let blocked = stuck
            .iter()
            .take(LISTED)
            .map(|&r| {
                let rank = &self.ranks[r as usize];
                BlockedRank {
                    trace: rank.job,
                    rank: rank.local,
                    row: rank.rows.current_id() as usize,
                    waiting_for: self.describe_row(r),
                }
            })
            .collect();
        Err(ReplayError::Deadlock {
            blocked,
            total_blocked: stuck.len(),
            unmatched,
        })
    }
}
