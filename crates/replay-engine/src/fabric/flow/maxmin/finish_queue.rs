//! Finish times of the flows as an indexed binary min-heap (an addressable priority queue:
//! Cormen, Leiserson, Rivest & Stein, "Introduction to Algorithms", 3rd ed., §6.5, with a
//! handle per element). Each flow has at most one entry, moved in place when its finish
//! time changes, so re-rating leaves no stale entries behind and the heap never holds more
//! than the live flows. Entries order by (time, slot): ties pop in slot order.
//!
//! An entry is one integer, time bits << 32 | slot: times are >= +0.0 (or +inf), whose bit
//! patterns order as the numbers do, so one integer comparison orders (time, slot).

const ABSENT: u32 = u32::MAX;

#[derive(Debug, Clone, Default)]
pub struct FinishQueue {
    /// Keys (see `key`), a binary min-heap.
    heap: Vec<u128>,
    /// Per slot: its index in `heap`, or `ABSENT`.
    pos: Vec<u32>,
}

fn key(t: f64, slot: u32) -> u128 {
    debug_assert!(t >= 0.0 && t.is_sign_positive(), "finish time {t}");
    u128::from(t.to_bits()) << 32 | u128::from(slot)
}

fn entry(k: u128) -> (f64, u32) {
    (f64::from_bits((k >> 32) as u64), k as u32)
}

impl FinishQueue {
    /// The earliest (time, slot).
    #[inline]
    pub fn peek(&self) -> Option<(f64, u32)> {
        self.heap.first().map(|&k| entry(k))
    }

    /// Inserts `slot` at time `t`, or moves it there. (Inlined, like `remove`: the solver
    /// calls them for every re-rated and every drained flow; as calls they cost ~1 % of a
    /// crossbar replay's instructions.)
    #[inline(always)]
    pub fn set(&mut self, slot: u32, t: f64) {
        let s = slot as usize;
        if self.pos.len() <= s {
            self.pos.resize(s + 1, ABSENT);
        }
        let e = key(t, slot);
        match self.pos[s] {
            ABSENT => {
                self.heap.push(e);
                self.sift_up(self.heap.len() - 1, e);
            }
            i => {
                let i = i as usize;
                if e < self.heap[i] {
                    self.sift_up(i, e);
                } else {
                    self.sift_down(i, e);
                }
            }
        }
    }

    /// Removes and returns the earliest entry.
    #[cfg(test)]
    pub fn pop(&mut self) -> Option<(f64, u32)> {
        let top = self.peek()?;
        self.remove(top.1);
        Some(top)
    }

    /// Removes `slot`'s entry, if any.
    #[inline(always)]
    pub fn remove(&mut self, slot: u32) {
        let Some(&i) = self.pos.get(slot as usize) else {
            return;
        };
        if i == ABSENT {
            return;
        }
        self.pos[slot as usize] = ABSENT;
        let last = self.heap.pop().expect("entry present");
        let i = i as usize;
        if i < self.heap.len() {
            // The last entry fills the hole, then moves whichever way restores the order.
            if i > 0 && last < self.heap[(i - 1) / 2] {
                self.sift_up(i, last);
            } else {
                self.sift_down(i, last);
            }
        }
    }

    /// Places `e` at hole `i` or above it. (Inlined, like `sift_down`: they run for every
    /// re-rated flow and every drained one.)
    #[inline(always)]
    fn sift_up(&mut self, mut i: usize, e: u128) {
        while i > 0 {
            let parent = (i - 1) / 2;
            let p = self.heap[parent];
            if e >= p {
                break;
            }
            self.place(i, p);
            i = parent;
        }
        self.place(i, e);
    }

    /// Places `e` at hole `i` or below it.
    #[inline(always)]
    fn sift_down(&mut self, mut i: usize, e: u128) {
        let n = self.heap.len();
        loop {
            let mut child = 2 * i + 1;
            if child >= n {
                break;
            }
            if child + 1 < n && self.heap[child + 1] < self.heap[child] {
                child += 1;
            }
            let c = self.heap[child];
            if c >= e {
                break;
            }
            self.place(i, c);
            i = child;
        }
        self.place(i, e);
    }

    fn place(&mut self, i: usize, e: u128) {
        self.heap[i] = e;
        self.pos[e as u32 as usize] = i as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prng::SplitMix64;

    /// Random inserts, moves, removals and pops against a sorted-list model.
    #[test]
    fn pops_in_time_then_slot_order_like_a_sorted_model() {
        let mut rng = SplitMix64::new(7);
        let mut q = FinishQueue::default();
        let mut model: Vec<(f64, u32)> = Vec::new();
        for _ in 0..20_000 {
            let slot = rng.below(64) as u32;
            let t = rng.below(16) as f64; // many ties
            match rng.below(4) {
                0 | 1 => {
                    q.set(slot, t);
                    model.retain(|e| e.1 != slot);
                    model.push((t, slot));
                }
                2 => {
                    q.remove(slot);
                    model.retain(|e| e.1 != slot);
                }
                _ => {
                    model.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                    let want = (!model.is_empty()).then(|| model.remove(0));
                    assert_eq!(q.pop(), want);
                }
            }
            assert_eq!(q.heap.len(), model.len());
        }
    }
}
