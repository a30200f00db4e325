//! A fabric's own pending instants (circuit setups, arbitration rounds, slot boundaries,
//! backoff expiries): a min-heap popping by (time, insertion order), so equal times keep
//! the order they were scheduled in and a replay stays a pure function of its inputs.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

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
    seq: u64,
}

impl<T> Default for Timers<T> {
    fn default() -> Self {
        Self {
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }
}

impl<T> Timers<T> {
    /// Schedules `item` at `t` (>= 0; times order as their bit patterns for t >= +0).
    pub fn push(&mut self, t: Time, item: T) {
        debug_assert!(t >= 0.0 && t.is_sign_positive(), "timer at {t}");
        self.seq += 1;
        self.heap.push(Entry {
            key: Reverse((t.to_bits(), self.seq)),
            item,
        });
    }

    /// The earliest scheduled time.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| f64::from_bits(e.key.0 .0))
    }

    /// Removes and returns the earliest item if it is due at or before `now`.
    pub fn pop_due(&mut self, now: Time) -> Option<(Time, T)> {
        if self.peek_time()? > now {
            return None;
        }
        let e = self.heap.pop().expect("peeked");
        Some((f64::from_bits(e.key.0 .0), e.item))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
}
