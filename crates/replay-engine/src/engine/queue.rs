//! The engine's event queue, ordered by (time, insertion sequence). Times are finite and
//! non-negative, so their IEEE-754 bit patterns order like the numbers; ties break in
//! insertion order, which keeps a replay a pure function of its inputs.
//!
//! A 4-ary implicit min-heap: half the depth of a binary heap, and the four children of a
//! node share a cache line or two, which makes `pop` (the engine's most frequent queue
//! operation) cheaper than `std::collections::BinaryHeap`'s.
//!
//! Events scheduled for the queue's current instant (a rank woken by a delivery at the
//! time it arrives) skip the heap: they go to a FIFO. Ordering stays exactly (time,
//! insertion): a heap event at the current instant was pushed while the clock was still
//! earlier, so it precedes every FIFO event, and the clock never advances while the FIFO
//! holds events (their time is the earliest).

use crate::fabric::Time;

#[derive(Debug, Clone, Copy)]
struct Entry<E> {
    t: u64,
    seq: u64,
    ev: E,
}

impl<E> Entry<E> {
    #[inline]
    fn before(&self, o: &Self) -> bool {
        // One 128-bit comparison (compiles branch-free), not a tuple's two.
        let key = |e: &Self| u128::from(e.t) << 64 | u128::from(e.seq);
        key(self) < key(o)
    }
}

#[derive(Debug)]
pub struct EventQueue<E> {
    heap: Vec<Entry<E>>,
    seq: u64,
    /// Events of the instant `clock`, in insertion order.
    fifo: std::collections::VecDeque<E>,
    /// The queue's current instant (bits): the last time popped or advanced to.
    clock: u64,
}

#[inline]
fn bits(t: Time) -> u64 {
    debug_assert!(t >= 0.0 && !t.is_nan(), "event time {t}");
    (t + 0.0).to_bits() // + 0.0: -0.0 → +0.0
}

const ARITY: usize = 4;

impl<E: Copy> EventQueue<E> {
    pub fn with_capacity(n: usize) -> Self {
        Self {
            heap: Vec::with_capacity(n),
            seq: 0,
            fifo: std::collections::VecDeque::with_capacity(n),
            clock: 0,
        }
    }

    /// Moves the clock to `t` (something other than this queue decided the instant; no
    /// queued event is earlier).
    pub fn advance_to(&mut self, t: Time) {
        let t = bits(t);
        debug_assert!(t >= self.clock && self.fifo.is_empty(), "clock moved back");
        self.clock = t;
    }

    pub fn push(&mut self, t: Time, ev: E) {
        let tb = bits(t);
        debug_assert!(tb >= self.clock, "event at {t} scheduled in the past");
        if tb == self.clock {
            self.fifo.push_back(ev);
            return;
        }
        self.seq += 1;
        let e = Entry {
            t: tb,
            seq: self.seq,
            ev,
        };
        let mut i = self.heap.len();
        self.heap.push(e);
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if !e.before(&self.heap[parent]) {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = e;
    }

    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        if !self.fifo.is_empty() {
            return Some(f64::from_bits(self.clock)); // never later than the heap's top
        }
        self.heap.first().map(|e| f64::from_bits(e.t))
    }

    pub fn pop(&mut self) -> Option<(Time, E)> {
        if !self.fifo.is_empty() && self.heap.first().is_none_or(|e| e.t > self.clock) {
            let ev = self.fifo.pop_front().expect("non-empty");
            return Some((f64::from_bits(self.clock), ev));
        }
        let popped = self.pop_heap();
        if let Some((t, _)) = popped {
            self.clock = bits(t);
        }
        popped
    }

    fn pop_heap(&mut self) -> Option<(Time, E)> {
        let last = self.heap.pop()?;
        let n = self.heap.len();
        if n == 0 {
            return Some((f64::from_bits(last.t), last.ev));
        }
        let top = self.heap[0];
        // Sift `last` down from the root into the hole.
        let mut i = 0;
        loop {
            let first = i * ARITY + 1;
            if first >= n {
                break;
            }
            let end = (first + ARITY).min(n);
            let mut best = first;
            for c in first + 1..end {
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
        Some((f64::from_bits(top.t), top.ev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prng::SplitMix64;

    /// Against a reference (a list ordered by time, then insertion), in the way the engine
    /// uses the queue: pushes never earlier than the last pop, many at exactly that time
    /// (the FIFO path), pops interleaved, and the clock sometimes moved by `advance_to`.
    #[test]
    fn pops_in_time_then_insertion_order() {
        for seed in 0..50 {
            let mut rng = SplitMix64::new(seed);
            let mut q = EventQueue::with_capacity(4);
            let mut reference: Vec<(f64, u64, u32)> = Vec::new();
            let (mut clock, mut n) = (0.0f64, 0u64);
            for step in 0..3000u32 {
                match rng.below(10) {
                    0..=5 => {
                        let t = match rng.below(3) {
                            0 => clock,
                            _ => clock + (rng.below(20) * 10) as f64,
                        };
                        n += 1;
                        q.push(t, step);
                        reference.push((t, n, step));
                    }
                    6 if reference.iter().all(|e| e.0 > clock) && !reference.is_empty() => {
                        let earliest = reference.iter().map(|e| e.0).fold(f64::INFINITY, f64::min);
                        clock = (clock + earliest) / 2.0;
                        q.advance_to(clock);
                    }
                    _ => {
                        reference.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                        let want = (!reference.is_empty()).then(|| reference.remove(0));
                        assert_eq!(q.peek_time(), want.map(|w| w.0));
                        assert_eq!(q.pop(), want.map(|w| (w.0, w.2)), "seed {seed} step {step}");
                        if let Some(w) = want {
                            clock = w.0;
                        }
                    }
                }
            }
        }
        let mut q = EventQueue::with_capacity(1);
        q.push(-0.0, 1);
        q.push(0.0, 2);
        assert_eq!(q.pop(), Some((0.0, 1)));
    }
}
