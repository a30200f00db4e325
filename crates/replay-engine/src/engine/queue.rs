//! The engine's event queue, ordered by (time, insertion sequence). Times are finite and
//! non-negative, so their IEEE-754 bit patterns order like the numbers and the key is one
//! u128 (time bits, sequence) compared as an integer; ties break in insertion order, which
//! keeps a replay a pure function of its inputs.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::fabric::Time;

#[derive(Debug)]
pub struct EventQueue<E: Ord> {
    heap: BinaryHeap<Reverse<(u128, E)>>,
    seq: u64,
}

#[inline]
fn key(t: Time, seq: u64) -> u128 {
    debug_assert!(t >= 0.0 && !t.is_nan(), "event time {t}");
    (u128::from((t + 0.0).to_bits()) << 64) | u128::from(seq) // + 0.0: -0.0 → +0.0
}

#[inline]
fn time_of(k: u128) -> Time {
    f64::from_bits((k >> 64) as u64)
}

impl<E: Ord + Copy> EventQueue<E> {
    pub fn with_capacity(n: usize) -> Self {
        Self {
            heap: BinaryHeap::with_capacity(n),
            seq: 0,
        }
    }

    pub fn push(&mut self, t: Time, ev: E) {
        self.seq += 1;
        self.heap.push(Reverse((key(t, self.seq), ev)));
    }

    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|Reverse((k, _))| time_of(*k))
    }

    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.heap.pop().map(|Reverse((k, ev))| (time_of(k), ev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prng::SplitMix64;

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut q = EventQueue::with_capacity(4);
        let mut rng = SplitMix64::new(7);
        let mut expect = Vec::new();
        for i in 0..2000u32 {
            let t = (rng.below(50) * 10) as f64;
            q.push(t, 5000 - i); // payloads in reverse: order must come from the sequence
            expect.push((t, 5000 - i));
        }
        expect.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)));
        let got: Vec<(f64, u32)> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(got, expect);
        q.push(-0.0, 1);
        q.push(0.0, 2);
        assert_eq!(q.pop(), Some((0.0, 1)));
    }
}
