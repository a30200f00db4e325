//! The links each unit of segment switching holds, in one array with a fixed-size slot per
//! unit: a unit's links are found from its number alone, so reading them does not wait for
//! its `Unit` to be read first (two independent cache misses instead of a chain of two).

/// Per-unit lists of link ids; a slot is its length then its links, and grows (all slots
/// move) when a list longer than any before comes.
#[derive(Debug, Default)]
pub struct HeldLinks {
    stride: usize,
    slots: Vec<u32>,
}

impl HeldLinks {
    /// Replaces unit `u`'s list by `links`.
    pub fn set(&mut self, u: u32, links: impl ExactSizeIterator<Item = u32>) {
        let n = links.len();
        if n + 1 > self.stride {
            self.restride((n + 1).max(2 * self.stride));
        }
        let at = u as usize * self.stride;
        if self.slots.len() < at + self.stride {
            self.slots.resize(at + self.stride, 0);
        }
        let slot = &mut self.slots[at..at + 1 + n];
        slot[0] = n as u32;
        for (x, l) in slot[1..].iter_mut().zip(links) {
            *x = l;
        }
    }

    /// Unit `u`'s list (empty if it was never set).
    pub fn get(&self, u: u32) -> &[u32] {
        let at = u as usize * self.stride;
        match self.slots.get(at) {
            Some(&n) => &self.slots[at + 1..at + 1 + n as usize],
            None => &[],
        }
    }

    fn restride(&mut self, stride: usize) {
        let units = self.slots.len().checked_div(self.stride).unwrap_or(0);
        let mut slots = vec![0; units * stride];
        for u in 0..units {
            let (from, to) = (u * self.stride, u * stride);
            let n = 1 + self.slots[from] as usize;
            slots[to..to + n].copy_from_slice(&self.slots[from..from + n]);
        }
        self.stride = stride;
        self.slots = slots;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_survive_a_longer_list_moving_every_slot() {
        let mut h = HeldLinks::default();
        assert!(h.get(3).is_empty());
        h.set(1, [7, 8].into_iter());
        h.set(0, [].into_iter());
        h.set(4, 10..15);
        assert_eq!(h.get(1), &[7, 8]);
        assert!(h.get(0).is_empty());
        assert_eq!(h.get(4), &[10, 11, 12, 13, 14]);
        h.set(1, [9].into_iter());
        assert_eq!(h.get(1), &[9]);
    }
}
