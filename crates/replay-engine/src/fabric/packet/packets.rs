//! Packets in flight (struct of arrays, ids reused) and the messages they belong to.

use super::topology::Hop;
use crate::fabric::{Time, TransferId};

/// Packets by id: where each is on its route and when it may move on.
#[derive(Default)]
pub struct Packets {
    /// The message (slot in `Messages`) a packet belongs to.
    pub msg: Vec<u32>,
    pub bytes: Vec<u32>,
    /// Index in `route` of the hop it takes next (from the input it sits in).
    pub hop: Vec<u16>,
    /// When its head may leave the input it sits in (arrival plus router delay).
    pub ready: Vec<Time>,
    /// When its tail is there (plus router delay): with cut-through, the next link may not
    /// finish sending before it.
    pub tail: Vec<Time>,
    /// Since when it waits with its output free but no credit (negative: it does not).
    pub stalled: Vec<Time>,
    pub route: Vec<Vec<Hop>>,
    free: Vec<u32>,
}

impl Packets {
    /// A new packet id with an empty route.
    pub fn add(&mut self, msg: u32, bytes: u32, ready: Time) -> u32 {
        if let Some(p) = self.free.pop() {
            let i = p as usize;
            self.msg[i] = msg;
            self.bytes[i] = bytes;
            self.hop[i] = 0;
            self.ready[i] = ready;
            self.tail[i] = ready;
            self.stalled[i] = -1.0;
            self.route[i].clear();
            return p;
        }
        self.msg.push(msg);
        self.bytes.push(bytes);
        self.hop.push(0);
        self.ready.push(ready);
        self.tail.push(ready);
        self.stalled.push(-1.0);
        self.route.push(Vec::new());
        self.msg.len() as u32 - 1
    }

    pub fn remove(&mut self, p: u32) {
        self.free.push(p);
    }

    /// The hop a packet takes next.
    pub fn next_hop(&self, p: u32) -> Hop {
        let i = p as usize;
        self.route[i][self.hop[i] as usize]
    }

    /// Whether its next hop is the last (into its destination endpoint).
    pub fn last_hop(&self, p: u32) -> bool {
        let i = p as usize;
        self.hop[i] as usize + 1 == self.route[i].len()
    }
}

/// A message (transfer) cut into packets: delivered when its last packet is.
#[derive(Debug, Clone, Copy)]
pub struct Message {
    pub id: TransferId,
    pub endpoints: (u32, u32),
    pub bytes: u64,
    pub submitted: Time,
    pub packets_left: u32,
    /// When it would be delivered on an idle network (the flow model's zero-load time).
    pub zero_load_at: Time,
    pub hops: u32,
    /// Highest path class among its packets (non-minimal if any went so).
    pub path: u8,
    pub credit_stalls: u32,
}
