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
//!
//! A closed-form collective wakes all its members at once: their events come as a batch,
//! sorted once and kept as a run merged with the heap at pop time, instead of hundreds of
//! heap insertions and deeper heaps.

use crate::fabric::Time;

#[derive(Debug, Clone, Copy)]
struct Entry<E> {
    t: u64,
    seq: u64,
    ev: E,
}

impl<E> Entry<E> {
    #[inline]
    fn key(&self) -> u128 {
        u128::from(self.t) << 64 | u128::from(self.seq)
    }

    #[inline]
    fn before(&self, o: &Self) -> bool {
        // One 128-bit comparison (compiles branch-free), not a tuple's two.
        self.key() < o.key()
    }
}

/// Events pushed together, sorted by (time, sequence); `at` is the next one.
#[derive(Debug)]
struct Run<E> {
    items: Vec<Entry<E>>,
    at: usize,
}

/// Where the earliest queued (non-FIFO) event is.
#[derive(Clone, Copy)]
enum Head {
    Heap,
    Run(usize),
}

#[derive(Debug)]
pub struct EventQueue<E> {
    heap: Vec<Entry<E>>,
    seq: u64,
    /// Events of the instant `clock`, in insertion order.
    fifo: std::collections::VecDeque<E>,
    /// The queue's current instant (bits): the last time popped or advanced to.
    clock: u64,
    runs: Vec<Run<E>>,
    spare_runs: Vec<Vec<Entry<E>>>,
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
            runs: Vec::new(),
            spare_runs: Vec::new(),
        }
    }

    /// Pushes several events, in order, as `push` would one by one.
    pub fn push_batch(&mut self, events: impl IntoIterator<Item = (Time, E)>) {
        let mut items = self.spare_runs.pop().unwrap_or_default();
        items.clear();
        for (t, ev) in events {
            items.extend(self.entry(t, ev));
        }
        if items.is_empty() {
            self.spare_runs.push(items);
            return;
        }
        // Keys are unique. Often the batch is in order already (equal times: by sequence).
        // Sequence numbers rise in push order: a stable sort by time alone gives the order.
        if !items.is_sorted_by(|a, b| a.before(b)) {
            items.sort_by_key(|e| e.t);
        }
        self.runs.push(Run { items, at: 0 });
    }

    /// The earliest of the heap's top and the runs' heads.
    #[inline]
    fn head(&self) -> Option<(Head, &Entry<E>)> {
        let mut best = self.heap.first().map(|e| (Head::Heap, e));
        for (i, run) in self.runs.iter().enumerate() {
            let e = &run.items[run.at];
            if best.is_none_or(|(_, b)| e.before(b)) {
                best = Some((Head::Run(i), e));
            }
        }
        best
    }

    /// Moves the clock to `t` (something other than this queue decided the instant; no
    /// queued event is earlier).
    pub fn advance_to(&mut self, t: Time) {
        let t = bits(t);
        debug_assert!(t >= self.clock && self.fifo.is_empty(), "clock moved back");
        self.clock = t;
    }

    /// `ev` at `t` as a numbered heap entry, or None when it went to the FIFO (`t` is the
    /// current instant).
    #[inline]
    fn entry(&mut self, t: Time, ev: E) -> Option<Entry<E>> {
        let tb = bits(t);
        debug_assert!(tb >= self.clock, "event at {t} scheduled in the past");
        if tb == self.clock {
            self.fifo.push_back(ev);
            return None;
        }
        self.seq += 1;
        Some(Entry {
            t: tb,
            seq: self.seq,
            ev,
        })
    }

    pub fn push(&mut self, t: Time, ev: E) {
        let Some(e) = self.entry(t, ev) else { return };
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

    /// The current instant: no queued event is earlier.
    #[inline]
    pub fn now(&self) -> Time {
        f64::from_bits(self.clock)
    }

    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        if !self.fifo.is_empty() {
            return Some(f64::from_bits(self.clock)); // never later than the others
        }
        self.head().map(|(_, e)| f64::from_bits(e.t))
    }

    pub fn pop(&mut self) -> Option<(Time, E)> {
        let head = self.head().map(|(h, e)| (h, e.t));
        if !self.fifo.is_empty() && head.is_none_or(|(_, t)| t > self.clock) {
            let ev = self.fifo.pop_front().expect("non-empty");
            return Some((f64::from_bits(self.clock), ev));
        }
        let popped = match head?.0 {
            Head::Heap => self.pop_heap(),
            Head::Run(i) => {
                let run = &mut self.runs[i];
                let e = run.items[run.at];
                run.at += 1;
                if run.at == run.items.len() {
                    let done = self.runs.swap_remove(i);
                    self.spare_runs.push(done.items);
                }
                Some((f64::from_bits(e.t), e.ev))
            }
        };
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
                match rng.below(11) {
                    10 => {
                        let k = rng.below(6) as u32;
                        let batch: Vec<(f64, u32)> = (0..k)
                            .map(|i| (clock + (rng.below(4) * 10) as f64, step * 8 + i))
                            .collect();
                        for &(t, ev) in &batch {
                            n += 1;
                            reference.push((t, n, ev));
                        }
                        q.push_batch(batch);
                    }
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
