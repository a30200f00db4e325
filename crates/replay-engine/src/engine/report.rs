//! End-of-replay checks (deadlock, unmatched messages) and per-iteration latencies.

use std::collections::{BTreeMap, HashMap};

use super::state::{RState, USER};
use super::Engine;
use crate::error::{BlockedRank, ReplayError};
use crate::ops::Op;
use crate::trace::{TraceColumns, TraceIndex};

const LISTED: usize = 16;

impl Engine<'_> {
    fn describe_row(&self, r: u32) -> String {
        let rank = &self.ranks[r as usize];
        let c = &self.jobs[rank.job as usize].cols;
        let row = rank.cur_row as usize;
        let op = Op::from_code(c.op[row]).unwrap_or(Op::Other);
        let mut text = format!("{} (seq {}", op.name(), c.seq[row]);
        if op.collective().is_some() {
            if let Some(run) = &rank.coll {
                text += &format!(
                    ", comm {}, step {} of {}",
                    run.comm,
                    run.step + 1,
                    run.steps.len()
                );
            }
        } else {
            text += &format!(
                ", peer {}, tag {}, comm {}",
                c.peer[row], c.tag[row], c.comm[row]
            );
            if c.request[row] >= 0 {
                text += &format!(", request {}", c.request[row]);
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
        let msg = &self.msgs[m as usize];
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
        let stuck: Vec<u32> = (0..self.ranks.len() as u32)
            .filter(|&r| self.ranks[r as usize].state != RState::Done)
            .collect();
        let mut unmatched = Vec::new();
        for q in &self.unexpected {
            unmatched.extend(
                q.iter()
                    .map(|&m| self.describe_msg(m, "send never received:")),
            );
        }
        for (dst, q) in self.posted.iter().enumerate() {
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
        let mut keys: Vec<_> = self
            .coll_chan
            .iter()
            .filter(|(_, q)| !q.is_empty())
            .map(|(k, _)| *k)
            .collect();
        keys.sort_unstable();
        for k in keys {
            for e in &self.coll_chan[&k] {
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
                    row: rank.cur_row as usize,
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

/// Per iteration: the longest span (first start to last end) any rank spent in it.
pub(super) fn iteration_latencies(
    c: &TraceColumns<'_>,
    index: &TraceIndex,
    start: &[f64],
    end: &[f64],
) -> (Vec<i32>, Vec<f64>) {
    let (lo, hi) = c
        .iteration
        .iter()
        .filter(|&&i| i >= 0)
        .fold((i32::MAX, -1), |(lo, hi), &i| (lo.min(i), hi.max(i)));
    if hi < 0 {
        return (Vec::new(), Vec::new());
    }
    let range = (hi - lo) as usize + 1;
    if range <= 4 * c.len() + 1024 {
        return dense_latencies(c, index, start, end, lo, range);
    }
    let mut latency: BTreeMap<i32, f64> = BTreeMap::new();
    let mut span: HashMap<i32, (f64, f64)> = HashMap::new();
    for r in 0..index.ranks as usize {
        span.clear();
        for &row in &index.order[index.starts[r]..index.starts[r + 1]] {
            let (row, it) = (row as usize, c.iteration[row as usize]);
            if it >= 0 {
                let e = span.entry(it).or_insert((start[row], end[row]));
                e.0 = e.0.min(start[row]);
                e.1 = e.1.max(end[row]);
            }
        }
        for (&it, &(s, e)) in &span {
            let l = latency.entry(it).or_insert(0.0);
            *l = l.max(e - s);
        }
    }
    latency.into_iter().unzip()
}

/// `iteration_latencies` for iteration ids in a dense range `lo..lo + range`: per rank,
/// runs of rows with one iteration are folded into per-iteration spans (no hashing).
fn dense_latencies(
    c: &TraceColumns<'_>,
    index: &TraceIndex,
    start: &[f64],
    end: &[f64],
    lo: i32,
    range: usize,
) -> (Vec<i32>, Vec<f64>) {
    let mut latency = vec![f64::NAN; range];
    let mut span = vec![(f64::INFINITY, f64::NEG_INFINITY); range];
    let mut touched: Vec<usize> = Vec::new();
    for r in 0..index.ranks as usize {
        for &row in &index.order[index.starts[r]..index.starts[r + 1]] {
            let (row, it) = (row as usize, c.iteration[row as usize]);
            if it >= 0 {
                let slot = &mut span[(it - lo) as usize];
                if slot.0 == f64::INFINITY {
                    touched.push((it - lo) as usize);
                }
                slot.0 = slot.0.min(start[row]);
                slot.1 = slot.1.max(end[row]);
            }
        }
        for &i in &touched {
            let (s, e) = span[i];
            latency[i] = if latency[i].is_nan() {
                e - s
            } else {
                latency[i].max(e - s)
            };
            span[i] = (f64::INFINITY, f64::NEG_INFINITY);
        }
        touched.clear();
    }
    (0..range)
        .filter(|&i| !latency[i].is_nan())
        .map(|i| (lo + i as i32, latency[i]))
        .unzip()
}
