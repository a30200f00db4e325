//! The engine's event queue: a 4-ary min-heap on (time, insertion sequence). Times are
//! finite and >= 0, so their IEEE-754 bit patterns order like the numbers and the key
//! compares as two integers; the sequence number breaks ties in insertion order, which
//! keeps a replay a pure function of its inputs. A 4-ary heap halves the depth of a binary
//! one and keeps a node's children in one cache line.

use crate::fabric::Time;

#[derive(Debug, Clone, Copy)]
struct Slot<E> {
    t: u64,
    seq: u64,
    ev: E,
}

impl<E> Slot<E> {
    #[inline]
    fn before(&self, o: &Self) -> bool {
        (self.t, self.seq) < (o.t, o.seq)
    }
}

#[derive(Debug)]
pub struct EventQueue<E> {
    heap: Vec<Slot<E>>,
    seq: u64,
    pub max_len: usize,
}

const ARITY: usize = 4;

#[inline]
fn key(t: Time) -> u64 {
    debug_assert!(t >= 0.0 && !t.is_nan(), "event time {t}");
    (t + 0.0).to_bits() // + 0.0 turns -0.0 into +0.0
}

impl<E: Copy> EventQueue<E> {
    pub fn with_capacity(n: usize) -> Self {
        Self {
            heap: Vec::with_capacity(n),
            seq: 0,
            max_len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn push(&mut self, t: Time, ev: E) {
        self.seq += 1;
        let item = Slot {
            t: key(t),
            seq: self.seq,
            ev,
        };
        let mut i = self.heap.len();
        self.heap.push(item);
        self.max_len = self.max_len.max(self.heap.len());
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if !item.before(&self.heap[parent]) {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = item;
    }

    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.first().map(|s| f64::from_bits(s.t))
    }

    pub fn pop(&mut self) -> Option<(Time, E)> {
        let top = *self.heap.first()?;
        let last = self.heap.pop().expect("non-empty");
        let n = self.heap.len();
        if n > 0 {
            let mut i = 0;
            loop {
                let first = i * ARITY + 1;
                if first >= n {
                    break;
                }
                let mut best = first;
                for c in first + 1..(first + ARITY).min(n) {
                    if self.heap[c].before(&self.heap[best]) {
                        best = c;
                    }
                }
                if !self.heap[best].before(&last) {
                    break;
                }
                self.heap[i] = self.heap[best];
                i = best;
            }
            self.heap[i] = last;
        }
        Some((f64::from_bits(top.t), top.ev))
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
            q.push(t, i);
            expect.push((t, i));
        }
        expect.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let got: Vec<(f64, u32)> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(got, expect);
        assert_eq!(q.len(), 0);
        q.push(-0.0, 1);
        q.push(0.0, 2);
        assert_eq!(q.pop(), Some((0.0, 1)));
    }
}
