//! The local re-solve's scratch state (see mod.rs), kept between settles to avoid
//! allocation: marks on flows and links, S and the links it uses, the flows verification
//! checks or grows S by, and the candidate queue of filling.
//!
//! Marks are 64-bit stamps (one per settle, one per filling round) compared for equality,
//! so nothing is cleared between calls and nothing ever wraps.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::FlowSlot;

/// Up to this many links, `fill` selects by scanning rather than with a candidate queue.
pub(super) const SCAN_LINKS: usize = 16;

/// Candidate (share, link) of progressive filling as one min-heap key, share bits << 32 |
/// link: shares are >= +0.0, whose bits order as the numbers do, so keys pop by share, then
/// link.
pub(super) type Candidate = Reverse<u128>;

#[inline]
pub(super) fn candidate(share: f64, link: u32) -> Candidate {
    Reverse(u128::from(share.to_bits()) << 32 | u128::from(link))
}

#[derive(Debug, Clone, Copy, Default)]
pub(super) struct FlowMark {
    /// == `Scratch::settle`: the flow is in S.
    pub(super) member: u64,
    /// == `Scratch::round`: the flow got its rate in this round.
    pub(super) fixed: u64,
    /// == `Scratch::round`: the flow (not in S) was met on a link of S in this round.
    pub(super) checked: u64,
    /// The rate this round gave it (valid when `fixed` is current).
    pub(super) new_rate: f64,
}

/// The re-solve's state of a link (kept in `Link`, beside its flows and capacity).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct LinkMark {
    /// == `Scratch::round`: the link carries a flow of S (its fields below are current).
    pub(super) round: u64,
    /// Capacity not yet given out (to F flows or to fixed S flows).
    pub(super) rem: f64,
    /// S flows on the link without a rate yet.
    pub(super) unfixed: u32,
    /// The share of its latest candidate entry (a lower bound of its current share).
    pub(super) pushed: f64,
}

pub(super) struct Scratch {
    stamp: u64,
    pub(super) settle: u64,
    pub(super) round: u64,
    pub(super) flow: Vec<FlowMark>,
    /// S, in the order its flows joined.
    pub(super) s_flows: Vec<FlowSlot>,
    /// The links S uses (this round).
    pub(super) s_links: Vec<u32>,
    /// S flows without a rate yet (this round): filling stops when none is left.
    pub(super) unfixed_flows: usize,
    /// F flows on the links S uses whose remembered bottleneck is one of them (this
    /// round), in the order check (b) verifies them.
    pub(super) neighbours: Vec<FlowSlot>,
    /// Flows that failed verification this round (may repeat).
    pub(super) grow: Vec<FlowSlot>,
    /// Candidates of `fill_by_queue`.
    pub(super) candidates: BinaryHeap<Candidate>,
    /// `fill` scans up to this many links (`SCAN_LINKS`; tests vary it).
    pub(super) scan_links: usize,
    /// Per link: (round, load, fastest rate) under the allocation being verified. Rates
    /// do not change while a round verifies, so each link is summed once per round, not
    /// once per flow checked on it (n flows on one link: n sums, not n²).
    pub(super) sums: Vec<(u64, f64, f64)>,
}

impl Scratch {
    pub(super) fn new(links: usize) -> Self {
        Self {
            stamp: 0,
            settle: 0,
            round: 0,
            flow: Vec::new(),
            s_flows: Vec::new(),
            s_links: Vec::new(),
            unfixed_flows: 0,
            neighbours: Vec::new(),
            grow: Vec::new(),
            candidates: BinaryHeap::new(),
            scan_links: SCAN_LINKS,
            sums: vec![(0, 0.0, 0.0); links],
        }
    }

    /// Makes room for one more flow slot.
    pub(super) fn add_flow(&mut self) {
        self.flow.push(FlowMark::default());
    }

    pub(super) fn next_stamp(&mut self) -> u64 {
        self.stamp += 1;
        self.stamp
    }

    /// Rate a flow has under the allocation being verified (new rate for S flows).
    pub(super) fn rate_of(&self, f: FlowSlot, committed: f64) -> f64 {
        let m = &self.flow[f as usize];
        if m.member == self.settle {
            m.new_rate
        } else {
            committed
        }
    }
}
