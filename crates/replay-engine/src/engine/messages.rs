//! Messages in flight between ranks (user and collective-internal): a slab whose slot is
//! the message's transfer id on the fabric (network.rs).

use crate::fabric::{Kind, Time};

/// `Msg::inst` of user (non-collective) messages.
pub const USER: u64 = u64::MAX;

#[derive(Debug, Clone, Copy)]
pub struct Msg {
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
    pub comm: i32,
    pub tag: i32,
    pub inst: u64,
    pub send_req: u32,
    pub recv_req: u32,
    /// The send's posting number (its request's; kept here as the request may be freed
    /// before the data leaves).
    pub posted: u64,
    pub matched: bool,
    /// Rendezvous: when the request-to-send was processed at the receiver (NaN before).
    pub rts_at: Time,
    /// Eager: when the data arrived (NaN before).
    pub delivered_at: Time,
    /// What its next (or current) transfer on the fabric is: Eager or Rendezvous data, or
    /// while the handshake runs, the RTS or CTS.
    pub kind: Kind,
}

impl Msg {
    /// Rendezvous protocol (data after a handshake, or the handshake itself).
    #[inline]
    pub fn rndv(&self) -> bool {
        self.kind != Kind::Eager
    }
}

/// Where a message came from, kept beside the slab only when messages are recorded (a
/// smaller `Msg` is faster for everyone else).
#[derive(Debug, Clone, Copy, Default)]
pub struct Origin {
    /// When the send was posted, and the seq of the row that posted it.
    pub posted_at: Time,
    pub send_seq: i64,
}

#[derive(Debug, Default)]
pub struct Messages {
    slots: Vec<Msg>,
    free: Vec<u32>,
    /// `Origin` by slot (empty unless `set_origin` is used).
    origins: Vec<Origin>,
}

impl Messages {
    #[inline]
    pub fn open(&mut self, m: Msg) -> u32 {
        match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = m;
                slot
            }
            None => {
                self.slots.push(m);
                (self.slots.len() - 1) as u32
            }
        }
    }

    #[inline]
    pub fn release(&mut self, slot: u32) {
        self.free.push(slot);
    }

    pub fn set_origin(&mut self, slot: u32, origin: Origin) {
        let i = slot as usize;
        if self.origins.len() <= i {
            self.origins.resize(i + 1, Origin::default());
        }
        self.origins[i] = origin;
    }

    pub fn origin(&self, slot: u32) -> Origin {
        self.origins[slot as usize]
    }
}

impl std::ops::Index<u32> for Messages {
    type Output = Msg;
    #[inline]
    fn index(&self, slot: u32) -> &Msg {
        &self.slots[slot as usize]
    }
}

impl std::ops::IndexMut<u32> for Messages {
    #[inline]
    fn index_mut(&mut self, slot: u32) -> &mut Msg {
        &mut self.slots[slot as usize]
    }
}
