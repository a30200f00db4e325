//! The order in which a switch controller serves the ports requesting a path in one round
//! of arbitration: the seven policies of seed 000 §III-B.
//!
//! - FIFO: in the order the requests were received.
//! - LRU: the port serviced least recently first (never serviced = first). The seed calls
//!   a port *serviced* when the controller takes up its request in a round, whether it
//!   allocates a path or blocks the port (§III-A: "serving communication requests
//!   sequentially in the order specified by the arbitration policy … If no path is
//!   available, the controller blocks the input port"), so every port a round looks at
//!   moves behind the ports it did not.
//! - LFU: the port that transmitted the least traffic first.
//! - RND: a fresh random order every round.
//! - RR: from an index, cyclically; the index moves on by one every round.
//! - ARR: like RR, but the index jumps to the first port of the round that requested a
//!   path and was blocked (by one when none was).
//! - MRR: the ports split into 4 consecutive sets, each with its own index, plus an index
//!   choosing the set served first; every round moves the set index and the index of the
//!   set it selected on by one. Sets are served from the selected one on, each from its
//!   own index.
//!
//! Ties (FIFO requests received at one instant, LRU/LFU equals) go by receipt order, then
//! port number.

use crate::prng::SplitMix64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    Fifo,
    Lru,
    Lfu,
    Rnd,
    Rr,
    Arr,
    Mrr,
}

impl Policy {
    pub const NAMES: &'static [&'static str] = &["fifo", "lru", "lfu", "rnd", "rr", "arr", "mrr"];

    pub fn parse(name: &str) -> Option<Self> {
        let all = [
            Self::Fifo,
            Self::Lru,
            Self::Lfu,
            Self::Rnd,
            Self::Rr,
            Self::Arr,
            Self::Mrr,
        ];
        Self::NAMES.iter().position(|n| *n == name).map(|i| all[i])
    }
}

/// What a policy ranks a requesting port by.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PortHistory {
    /// Receipt number of its pending request (smaller = earlier).
    pub request_seq: u64,
    /// Order number of the last time a round took up its request (0: never).
    pub last_serviced: u64,
    /// Bytes it has been granted so far.
    pub served_bytes: u64,
}

/// The MRR port sets (at most 4, fewer on tiny switches).
const MRR_SETS: u32 = 4;

#[derive(Debug, Clone)]
pub struct Arbiter {
    policy: Policy,
    ports: u32,
    /// RR / ARR index.
    index: u32,
    /// MRR: the set served first, and each set's own index.
    set: u32,
    set_index: Vec<u32>,
    rng: SplitMix64,
}

impl Arbiter {
    pub fn new(policy: Policy, ports: u32, rng: SplitMix64) -> Self {
        let sets = MRR_SETS.min(ports).max(1);
        Self {
            policy,
            ports,
            index: 0,
            set: 0,
            set_index: vec![0; sets as usize],
            rng,
        }
    }

    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// Sorts `requesters` (distinct ports) into this round's service order.
    pub fn order(&mut self, requesters: &mut [u32], history: &[PortHistory]) {
        let by_receipt = |p: &u32| (history[*p as usize].request_seq, *p);
        match self.policy {
            Policy::Fifo => requesters.sort_unstable_by_key(by_receipt),
            Policy::Lru => requesters.sort_unstable_by_key(|p| {
                let h = &history[*p as usize];
                (h.last_serviced, h.request_seq, *p)
            }),
            Policy::Lfu => requesters.sort_unstable_by_key(|p| {
                let h = &history[*p as usize];
                (h.served_bytes, h.request_seq, *p)
            }),
            Policy::Rnd => {
                requesters.sort_unstable();
                self.rng.shuffle(requesters);
            }
            Policy::Rr | Policy::Arr => {
                let (i, n) = (self.index, self.ports);
                requesters.sort_unstable_by_key(|p| (p + n - i) % n);
            }
            Policy::Mrr => {
                let sets = self.set_index.len() as u32;
                let size = self.ports / sets;
                let rank = |p: u32| {
                    let s = (p / size).min(sets - 1);
                    let first = s * size;
                    let len = if s == sets - 1 {
                        self.ports - first
                    } else {
                        size
                    };
                    let set_rank = (s + sets - self.set) % sets;
                    let within = (p - first + len - self.set_index[s as usize] % len) % len;
                    (set_rank, within)
                };
                requesters.sort_unstable_by_key(|p| rank(*p));
            }
        }
    }

    /// Ends a round in which `first_blocked` (in service order) was the first port refused.
    pub fn end_round(&mut self, first_blocked: Option<u32>) {
        match self.policy {
            Policy::Rr => self.index = (self.index + 1) % self.ports,
            Policy::Arr => {
                self.index = first_blocked.unwrap_or((self.index + 1) % self.ports);
            }
            Policy::Mrr => {
                let sets = self.set_index.len() as u32;
                self.set_index[self.set as usize] += 1;
                self.set = (self.set + 1) % sets;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arbiter(policy: Policy, ports: u32) -> Arbiter {
        Arbiter::new(policy, ports, SplitMix64::new(9))
    }

    fn order(a: &mut Arbiter, req: &[u32], h: &[PortHistory]) -> Vec<u32> {
        let mut r = req.to_vec();
        a.order(&mut r, h);
        r
    }

    #[test]
    fn priority_policies_rank_by_receipt_recency_and_traffic() {
        let mut h = vec![PortHistory::default(); 4];
        for (p, (seq, last, bytes)) in [(3, 10, 500), (1, 5, 100), (2, 0, 300), (0, 7, 100)]
            .into_iter()
            .enumerate()
        {
            h[p] = PortHistory {
                request_seq: seq,
                last_serviced: last,
                served_bytes: bytes,
            };
        }
        let all = [0, 1, 2, 3];
        assert_eq!(
            order(&mut arbiter(Policy::Fifo, 4), &all, &h),
            vec![3, 1, 2, 0]
        );
        assert_eq!(
            order(&mut arbiter(Policy::Lru, 4), &all, &h),
            vec![2, 1, 3, 0]
        );
        // Ports 1 and 3 sent 100 B each; port 3's request came first.
        assert_eq!(
            order(&mut arbiter(Policy::Lfu, 4), &all, &h),
            vec![3, 1, 2, 0]
        );
    }

    #[test]
    fn rr_moves_by_one_and_arr_jumps_to_the_first_blocked() {
        let h = vec![PortHistory::default(); 4];
        let mut rr = arbiter(Policy::Rr, 4);
        assert_eq!(order(&mut rr, &[0, 1, 2, 3], &h), vec![0, 1, 2, 3]);
        rr.end_round(Some(3));
        assert_eq!(order(&mut rr, &[0, 2, 3], &h), vec![2, 3, 0]);
        let mut arr = arbiter(Policy::Arr, 4);
        arr.end_round(Some(3));
        assert_eq!(order(&mut arr, &[0, 1, 2, 3], &h), vec![3, 0, 1, 2]);
        arr.end_round(None);
        assert_eq!(order(&mut arr, &[0, 1, 2, 3], &h), vec![0, 1, 2, 3]);
    }

    #[test]
    fn mrr_rotates_the_set_and_the_selected_sets_index() {
        let h = vec![PortHistory::default(); 8];
        let all: Vec<u32> = (0..8).collect();
        let mut m = arbiter(Policy::Mrr, 8); // sets {0,1} {2,3} {4,5} {6,7}
        assert_eq!(order(&mut m, &all, &h), vec![0, 1, 2, 3, 4, 5, 6, 7]);
        m.end_round(None); // set 0's index → 1; set index → 1
        assert_eq!(order(&mut m, &all, &h), vec![2, 3, 4, 5, 6, 7, 1, 0]);
        m.end_round(None); // set 1's index → 1; set index → 2
        assert_eq!(order(&mut m, &all, &h), vec![4, 5, 6, 7, 1, 0, 3, 2]);
    }

    #[test]
    fn rnd_is_a_seeded_permutation() {
        let h = vec![PortHistory::default(); 16];
        let all: Vec<u32> = (0..16).collect();
        let a = order(&mut arbiter(Policy::Rnd, 16), &all, &h);
        let b = order(&mut arbiter(Policy::Rnd, 16), &all, &h);
        assert_eq!(a, b);
        assert_ne!(a, all);
        let mut s = a.clone();
        s.sort_unstable();
        assert_eq!(s, all);
        assert_eq!(Policy::parse("arr"), Some(Policy::Arr));
        assert_eq!(Policy::parse("xx"), None);
    }
}
