//! A fabric's own pending instants (circuit setups, arbitration rounds, slot boundaries,
//! backoff expiries): popped by (time, insertion order), so equal times keep the order they
//! were scheduled in and a replay stays a pure function of its inputs.
//!
//! Fabrics schedule at or after the instant they serve, so the queue is a radix heap on
//! the time's bit pattern (times >= +0 order as their bits): an item sits in the bucket of
//! the highest bit where it differs from the instant last served, and only the lowest
//! bucket is ever sorted out, one move per item per bit level instead of a heap sift.
//! Bucket 0 holds the items at the instant served, in insertion order; buckets fill in
//! insertion order and are only split into empty lower ones, so equal times stay in
//! insertion order. An item scheduled before the instant served (the API allows it) goes
//! to a small (time, insertion)-ordered heap that is always served first.

use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::Time;

#[derive(Debug, Clone)]
struct Early<T> {
    key: Reverse<(u64, u64)>,
    item: T,
}

impl<T> PartialEq for Early<T> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<T> Eq for Early<T> {}
impl<T> PartialOrd for Early<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Early<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

/// Timers carrying an item each.
#[derive(Debug, Clone)]
pub struct Timers<T> {
    /// Items at time `last` (bits), in insertion order.
    now: VecDeque<T>,
    /// `buckets[i]`: items whose bits first differ from `last` at bit `i` (from the top).
    buckets: Vec<Vec<(u64, T)>>,
    /// Bit `i` set when `buckets[i]` is non-empty.
    full: u64,
    /// Least bits in `buckets`, when known (peeks take `&self`; pushes keep it current).
    least: Cell<Option<u64>>,
    /// The instant last served; 0 before any.
    last: u64,
    /// Items scheduled before `last`, by (bits, insertion).
    early: BinaryHeap<Early<T>>,
    seq: u64,
    len: usize,
}

impl<T> Default for Timers<T> {
    fn default() -> Self {
        Self {
            now: VecDeque::new(),
            buckets: (0..64).map(|_| Vec::new()).collect(),
            full: 0,
            least: Cell::new(None),
            last: 0,
            early: BinaryHeap::new(),
            seq: 0,
            len: 0,
        }
    }
}

impl<T> Timers<T> {
    /// Schedules `item` at `t` (>= 0; times order as their bit patterns for t >= +0).
    pub fn push(&mut self, t: Time, item: T) {
        debug_assert!(t >= 0.0 && t.is_sign_positive(), "timer at {t}");
        self.len += 1;
        let bits = t.to_bits();
        if bits == self.last {
            self.now.push_back(item);
        } else if bits > self.last {
            let b = (bits ^ self.last).leading_zeros() as usize;
            self.buckets[b].push((bits, item));
            self.full |= 1 << b;
            if let Some(m) = self.least.get() {
                self.least.set(Some(m.min(bits)));
            }
        } else {
            self.seq += 1;
            self.early.push(Early {
                key: Reverse((bits, self.seq)),
                item,
            });
        }
    }

    /// The lowest non-empty bucket, whose least bits are the least of all buckets (they
    /// share every higher bit with `last` and have a 1 where `last` has a 0).
    fn lowest(&self) -> Option<usize> {
        (self.full != 0).then(|| 63 - self.full.leading_zeros() as usize)
    }

    fn least_in_buckets(&self) -> Option<u64> {
        if let Some(m) = self.least.get() {
            return Some(m);
        }
        let m = self.buckets[self.lowest()?].iter().map(|e| e.0).min();
        self.least.set(m);
        m
    }

    /// The earliest scheduled time.
    pub fn peek_time(&self) -> Option<Time> {
        let bits = if let Some(e) = self.early.peek() {
            e.key.0 .0
        } else if !self.now.is_empty() {
            self.last
        } else {
            self.least_in_buckets()?
        };
        Some(f64::from_bits(bits))
    }

    /// Removes and returns the earliest item if it is due at or before `now`.
    pub fn pop_due(&mut self, now: Time) -> Option<(Time, T)> {
        let t = self.peek_time()?;
        if t > now {
            return None;
        }
        self.len -= 1;
        if let Some(e) = self.early.pop() {
            return Some((t, e.item));
        }
        if self.now.is_empty() {
            self.serve_next();
        }
        Some((t, self.now.pop_front().expect("served")))
    }

    /// Moves the serving instant to the least bits in the buckets and splits their bucket
    /// (the lowest) into the empty ones below it, keeping insertion order.
    fn serve_next(&mut self) {
        let b = self.lowest().expect("non-empty");
        self.last = self.least.take().expect("peeked");
        self.full &= !(1 << b);
        let mut items = std::mem::take(&mut self.buckets[b]);
        for (bits, item) in items.drain(..) {
            if bits == self.last {
                self.now.push_back(item);
            } else {
                let to = (bits ^ self.last).leading_zeros() as usize;
                self.buckets[to].push((bits, item));
                self.full |= 1 << to;
            }
        }
        self.buckets[b] = items;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
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
