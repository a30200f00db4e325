//! Finish times of the flows as an indexed binary min-heap (an addressable priority queue:
//! Cormen, Leiserson, Rivest & Stein, "Introduction to Algorithms", 3rd ed., §6.5, with a
//! handle per element). Each flow has at most one entry, moved in place when its finish
//! time changes, so re-rating leaves no stale entries behind and the heap never holds more
//! than the live flows. Entries order by (time, slot): ties pop in slot order.

use std::cmp::Ordering;

const ABSENT: u32 = u32::MAX;

#[derive(Debug, Clone, Default)]
pub struct FinishQueue {
    /// (time, slot), a binary min-heap.
    heap: Vec<(f64, u32)>,
    /// Per slot: its index in `heap`, or `ABSENT`.
    pos: Vec<u32>,
}

fn before(a: (f64, u32), b: (f64, u32)) -> bool {
    a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)) == Ordering::Less
}

impl FinishQueue {
    /// The earliest (time, slot).
    pub fn peek(&self) -> Option<(f64, u32)> {
        self.heap.first().copied()
    }

    /// Inserts `slot` at time `t`, or moves it there.
    pub fn set(&mut self, slot: u32, t: f64) {
        let s = slot as usize;
        if self.pos.len() <= s {
            self.pos.resize(s + 1, ABSENT);
        }
        let e = (t, slot);
        match self.pos[s] {
            ABSENT => {
                self.heap.push(e);
                self.sift_up(self.heap.len() - 1, e);
            }
            i => {
                let i = i as usize;
                if before(e, self.heap[i]) {
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
            if i > 0 && before(last, self.heap[(i - 1) / 2]) {
                self.sift_up(i, last);
            } else {
                self.sift_down(i, last);
            }
        }
    }

    /// Places `e` at hole `i` or above it.
    fn sift_up(&mut self, mut i: usize, e: (f64, u32)) {
        while i > 0 {
            let parent = (i - 1) / 2;
            let p = self.heap[parent];
            if !before(e, p) {
                break;
            }
            self.place(i, p);
            i = parent;
        }
        self.place(i, e);
    }

    /// Places `e` at hole `i` or below it.
    fn sift_down(&mut self, mut i: usize, e: (f64, u32)) {
        let n = self.heap.len();
        loop {
            let mut child = 2 * i + 1;
            if child >= n {
                break;
            }
            if child + 1 < n && before(self.heap[child + 1], self.heap[child]) {
                child += 1;
            }
            let c = self.heap[child];
            if !before(c, e) {
                break;
            }
            self.place(i, c);
            i = child;
        }
        self.place(i, e);
    }

    fn place(&mut self, i: usize, e: (f64, u32)) {
        self.heap[i] = e;
        self.pos[e.1 as usize] = i as u32;
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
