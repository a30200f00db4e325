//! MPI requests: a slab of slots with generations (a trace's request id maps to a slot and
//! its generation, so a reused slot is never mistaken for the old request).

use crate::fabric::Time;

#[derive(Debug, Clone, Copy)]
pub struct Req {
    pub owner: u32,
    pub gen: u32,
    /// Completion time once known, NaN before.
    pub done_at: Time,
    /// The owner is blocked on it.
    pub waited: bool,
    /// A wait/test took it: free the slot as soon as it is done.
    pub consumed: bool,
    pub live: bool,
    /// Its posting number (`Requests::post`): ports serve messages in this order.
    pub posted: u64,
}

impl Req {
    pub fn is_done(&self) -> bool {
        !self.done_at.is_nan()
    }
}

#[derive(Debug, Default)]
pub struct Requests {
    slots: Vec<Req>,
    free: Vec<u32>,
    /// Posting numbers handed out so far.
    posts: u64,
}

impl Requests {
    /// A new pending request of global rank `owner`.
    #[inline]
    pub fn open(&mut self, owner: u32) -> u32 {
        let posted = self.post();
        let req = Req {
            owner,
            gen: 0,
            done_at: f64::NAN,
            waited: false,
            consumed: false,
            live: true,
            posted,
        };
        match self.free.pop() {
            Some(slot) => {
                let gen = self.slots[slot as usize].gen.wrapping_add(1);
                self.slots[slot as usize] = Req { gen, ..req };
                slot
            }
            None => {
                self.slots.push(req);
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// The next posting number: one counter for every rank, so the numbers a rank's
    /// requests get rise in the order it posted them.
    #[inline]
    pub fn post(&mut self) -> u64 {
        self.posts += 1;
        self.posts
    }

    #[inline]
    pub fn release(&mut self, slot: u32) {
        self.slots[slot as usize].live = false;
        self.free.push(slot);
    }

    /// Whether `(slot, gen)` still names a live request nobody consumed.
    #[inline]
    pub fn valid(&self, slot: u32, gen: u32) -> bool {
        let q = &self.slots[slot as usize];
        q.live && q.gen == gen && !q.consumed
    }
}

impl std::ops::Index<u32> for Requests {
    type Output = Req;
    #[inline]
    fn index(&self, slot: u32) -> &Req {
        &self.slots[slot as usize]
    }
}

impl std::ops::IndexMut<u32> for Requests {
    #[inline]
    fn index_mut(&mut self, slot: u32) -> &mut Req {
        &mut self.slots[slot as usize]
    }
}
