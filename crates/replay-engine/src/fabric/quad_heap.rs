//! A 4-ary min-heap of (key, item) pairs: half the depth of a binary heap, and a node's four
//! children are adjacent in memory, so a pop from a heap of a million timers touches about
//! half as many cache lines. Keys must be distinct for a well-defined pop order.

#[derive(Debug, Clone)]
pub struct QuadHeap<K, T> {
    items: Vec<(K, T)>,
}

impl<K, T> Default for QuadHeap<K, T> {
    fn default() -> Self {
        Self { items: Vec::new() }
    }
}

impl<K: Ord + Copy, T> QuadHeap<K, T> {
    pub fn push(&mut self, key: K, item: T) {
        self.items.push((key, item));
        let mut i = self.items.len() - 1;
        while i > 0 {
            let parent = (i - 1) / 4;
            if self.items[i].0 >= self.items[parent].0 {
                break;
            }
            self.items.swap(i, parent);
            i = parent;
        }
    }

    /// The smallest key.
    pub fn peek_key(&self) -> Option<K> {
        self.items.first().map(|e| e.0)
    }

    /// Removes the item with the smallest key.
    pub fn pop(&mut self) -> Option<(K, T)> {
        let last = self.items.pop()?;
        if self.items.is_empty() {
            return Some(last);
        }
        let top = std::mem::replace(&mut self.items[0], last);
        let n = self.items.len();
        let mut i = 0;
        loop {
            let first = 4 * i + 1;
            if first >= n {
                break;
            }
            let mut min = first;
            for c in first + 1..(first + 4).min(n) {
                if self.items[c].0 < self.items[min].0 {
                    min = c;
                }
            }
            if self.items[min].0 >= self.items[i].0 {
                break;
            }
            self.items.swap(i, min);
            i = min;
        }
        Some(top)
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_key_order_through_interleaved_pushes() {
        let mut h = QuadHeap::default();
        let mut rng = crate::prng::SplitMix64::new(3);
        let mut want = std::collections::BTreeMap::new();
        for i in 0..20_000u64 {
            let key = (rng.below(5000), i);
            h.push(key, i);
            want.insert(key, i);
            if rng.below(3) == 0 {
                let (k, v) = want.pop_first().unwrap();
                assert_eq!(h.pop(), Some((k, v)));
            }
        }
        assert_eq!(h.len(), want.len());
        while let Some(kv) = want.pop_first() {
            assert_eq!(h.peek_key(), Some(kv.0));
            assert_eq!(h.pop(), Some(kv));
        }
        assert!(h.is_empty() && h.pop().is_none());
    }
}
