//! A fabric's own pending instants (circuit setups, arbitration rounds, slot boundaries,
//! backoff expiries): popped by (time, insertion order), so equal times keep the order they
//! were scheduled in and a replay stays a pure function of its inputs.
//!
//! Items scheduled for the instant being served (a retry woken at once, the next packet
//! cut now) go to a FIFO lane instead of the heap: they are already in (time, insertion)
//! order, and a busy instant costs O(1) per item instead of a heap sift.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::Time;

#[derive(Debug, Clone)]
struct Entry<T> {
    key: Reverse<(u64, u64)>,
    item: T,
}

impl<T> PartialEq for Entry<T> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<T> Eq for Entry<T> {}
impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Entry<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

/// Timers carrying an item each.
#[derive(Debug, Clone)]
pub struct Timers<T> {
    heap: BinaryHeap<Entry<T>>,
    /// Items at time `lane_time` (bits) in insertion order, with their sequence numbers.
    lane: VecDeque<(u64, T)>,
    /// The instant last served while the lane was empty; `u64::MAX` (a NaN) before any.
    lane_time: u64,
    seq: u64,
}

impl<T> Default for Timers<T> {
    fn default() -> Self {
        Self {
            heap: BinaryHeap::new(),
            lane: VecDeque::new(),
            lane_time: u64::MAX,
            seq: 0,
        }
    }
}

impl<T> Timers<T> {
    /// Schedules `item` at `t` (>= 0; times order as their bit patterns for t >= +0).
    pub fn push(&mut self, t: Time, item: T) {
        debug_assert!(t >= 0.0 && t.is_sign_positive(), "timer at {t}");
        self.seq += 1;
        let bits = t.to_bits();
        if bits == self.lane_time {
            self.lane.push_back((self.seq, item));
        } else {
            self.heap.push(Entry {
                key: Reverse((bits, self.seq)),
                item,
            });
        }
    }

    /// Key of the earliest item and whether it is the lane's.
    fn first(&self) -> Option<((u64, u64), bool)> {
        let heap = self.heap.peek().map(|e| e.key.0);
        let lane = self.lane.front().map(|&(seq, _)| (self.lane_time, seq));
        match (heap, lane) {
            (Some(h), Some(l)) => Some(if l < h { (l, true) } else { (h, false) }),
            (Some(h), None) => Some((h, false)),
            (None, Some(l)) => Some((l, true)),
            (None, None) => None,
        }
    }

    /// The earliest scheduled time.
    pub fn peek_time(&self) -> Option<Time> {
        self.first().map(|(k, _)| f64::from_bits(k.0))
    }

    /// Removes and returns the earliest item if it is due at or before `now`.
    pub fn pop_due(&mut self, now: Time) -> Option<(Time, T)> {
        let ((bits, _), in_lane) = self.first()?;
        let t = f64::from_bits(bits);
        if t > now {
            return None;
        }
        let item = if in_lane {
            self.lane.pop_front().expect("first").1
        } else {
            self.heap.pop().expect("first").item
        };
        if self.lane.is_empty() {
            self.lane_time = bits;
        }
        Some((t, item))
    }

    pub fn len(&self) -> usize {
        self.heap.len() + self.lane.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty() && self.lane.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_by_time_then_insertion() {
        let mut t = Timers::default();
        t.push(5.0, 'a');
        t.push(1.0, 'b');
        t.push(5.0, 'c');
        t.push(0.0, 'd');
        assert_eq!(t.peek_time(), Some(0.0));
        assert_eq!(t.pop_due(0.5), Some((0.0, 'd')));
        assert_eq!(t.pop_due(0.5), None);
        let rest: Vec<char> = std::iter::from_fn(|| t.pop_due(10.0).map(|x| x.1)).collect();
        assert_eq!(rest, vec!['b', 'a', 'c']);
        assert!(t.is_empty());
    }

    #[test]
    fn pops_many_by_time_then_insertion() {
        let mut t = Timers::default();
        let mut rng = crate::prng::SplitMix64::new(7);
        let mut want = Vec::new();
        for i in 0..2000u32 {
            let at = rng.below(300) as f64;
            t.push(at, i);
            want.push((at, i));
        }
        want.sort_by(|a, b| a.0.total_cmp(&b.0));
        let got: Vec<(f64, u32)> = std::iter::from_fn(|| t.pop_due(1e9)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn items_for_the_instant_served_keep_their_order_with_earlier_ones() {
        let mut t = Timers::default();
        t.push(1.0, 'a');
        t.push(2.0, 'b');
        t.push(1.0, 'c');
        assert_eq!(t.pop_due(5.0), Some((1.0, 'a')));
        // 1.0 is being served: 'd' queues after 'c', and an earlier time still goes first.
        t.push(1.0, 'd');
        t.push(0.5, 'e');
        assert_eq!(t.len(), 4);
        let rest: Vec<(f64, char)> = std::iter::from_fn(|| t.pop_due(5.0)).collect();
        assert_eq!(rest, vec![(0.5, 'e'), (1.0, 'c'), (1.0, 'd'), (2.0, 'b')]);
        assert!(t.is_empty());
    }
}
