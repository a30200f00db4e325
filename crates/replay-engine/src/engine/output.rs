//! What a replay produces: per-row simulated times (in-memory traces) or executed rows in
//! completion order (streamed ones), per-iteration latencies, whole-replay counters, and,
//! when recorded, one row per delivered message with what the fabric reported about it.

use crate::fabric::{Time, TransferInfo};

/// Whole-replay counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReplayStats {
    /// Trace rows executed.
    pub actions: u64,
    /// Point-to-point messages (user and collective-internal) of the traces.
    pub messages: u64,
    pub events: u64,
    /// Background generator messages injected and delivered, and their bytes.
    pub background_messages: u64,
    pub background_delivered: u64,
    pub background_bytes: u64,
    pub background_delivered_bytes: u64,
}

/// Replay results of one trace.
#[derive(Debug, Clone, PartialEq)]
pub struct JobResult {
    /// Simulated start / end of every row (ns from the start of the replay), in row order
    /// (empty for streamed traces: their rows went to `OpsOut`).
    pub sim_start_ns: Vec<f64>,
    pub sim_end_ns: Vec<f64>,
    /// Iteration ids present in the trace (ascending) and their latency: per rank the span
    /// from its first start to its last end inside the iteration, maximum over ranks (OSU's
    /// reported quantity), and the mean of the spans over the ranks that ran it (the
    /// agent's latency_us_mean). Iteration ids are expected not to decrease within a rank.
    pub iterations: Vec<i32>,
    pub iteration_latency_ns: Vec<f64>,
    pub iteration_mean_ns: Vec<f64>,
    /// Time the last rank finished (for a background trace cut off at the end of the
    /// foreground: the last rank that finished before).
    pub total_time_ns: f64,
    /// Endpoint of every rank.
    pub endpoints: Vec<u32>,
    /// Ranks that did not finish (background traces cut off; 0 for foreground traces).
    pub unfinished_ranks: u32,
}

/// Executed rows of a streamed trace, in completion order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OpsOut {
    pub rank: Vec<u32>,
    pub seq: Vec<i64>,
    pub op: Vec<u8>,
    pub sim_start_ns: Vec<f64>,
    pub sim_end_ns: Vec<f64>,
}

impl OpsOut {
    /// No rows, the capacity kept.
    pub fn clear(&mut self) {
        self.rank.clear();
        self.seq.clear();
        self.op.clear();
        self.sim_start_ns.clear();
        self.sim_end_ns.clear();
    }
}

/// One delivered message.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MessageRow {
    pub job: u32,
    pub src_rank: u32,
    /// Seq of the row that sent it (a collective's row for its internal messages).
    pub send_seq: i64,
    pub dst_rank: u32,
    pub bytes: u64,
    /// `fabric::Kind` code (eager or rendezvous).
    pub kind: u8,
    pub collective: bool,
    pub tag: i32,
    /// When the send was posted and when the last byte arrived.
    pub posted_ns: Time,
    pub delivered_ns: Time,
    pub info: TransferInfo,
}

/// Delivered messages in delivery order, as columns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MessagesOut {
    pub job: Vec<u32>,
    pub src_rank: Vec<u32>,
    pub send_seq: Vec<i64>,
    pub dst_rank: Vec<u32>,
    pub bytes: Vec<u64>,
    pub kind: Vec<u8>,
    pub collective: Vec<bool>,
    pub tag: Vec<i32>,
    pub posted_ns: Vec<f64>,
    pub delivered_ns: Vec<f64>,
    pub setup_ns: Vec<f64>,
    pub wait_ns: Vec<f64>,
    pub blocked: Vec<u32>,
    pub hops: Vec<u32>,
    pub path: Vec<u8>,
}

impl MessagesOut {
    pub fn push(&mut self, r: MessageRow) {
        self.job.push(r.job);
        self.src_rank.push(r.src_rank);
        self.send_seq.push(r.send_seq);
        self.dst_rank.push(r.dst_rank);
        self.bytes.push(r.bytes);
        self.kind.push(r.kind);
        self.collective.push(r.collective);
        self.tag.push(r.tag);
        self.posted_ns.push(r.posted_ns);
        self.delivered_ns.push(r.delivered_ns);
        self.setup_ns.push(r.info.setup_ns);
        self.wait_ns.push(r.info.wait_ns);
        self.blocked.push(r.info.blocked);
        self.hops.push(r.info.hops);
        self.path.push(r.info.path);
    }

    pub fn len(&self) -> usize {
        self.job.len()
    }

    pub fn is_empty(&self) -> bool {
        self.job.is_empty()
    }
}

#[derive(Debug, Clone)]
pub(super) enum Output {
    /// Simulated start / end by trace row number.
    Rows {
        start: Vec<f64>,
        end: Vec<f64>,
    },
    Ops(OpsOut),
    Discard,
}
