//! Packets in flight (ids reused) and the messages they belong to. What one event reads of
//! a packet sits in one record (a cache line), its route in a pool of `max_hops` slots per
//! packet.

use super::network::NONE;
use super::topology::Hop;
use crate::fabric::{Time, TransferId};

/// Where a packet is on its route and when it may move on.
#[derive(Debug, Clone, Copy)]
pub struct Packet {
    /// When its head may leave the input it sits in (arrival plus router delay).
    pub ready: Time,
    /// When its tail is there (plus router delay): with cut-through, the next link sends
    /// no faster than the tail comes in.
    pub tail: Time,
    /// Since when it waits with its output free but no credit (negative: it does not).
    pub stalled: Time,
    /// The message (slot in the messages' slab) it belongs to, and its endpoints (the
    /// message's, here for routing decisions along the way).
    pub msg: u32,
    pub endpoints: (u32, u32),
    pub bytes: u32,
    /// The packet behind it in its input queue (`NONE`: the last).
    pub next: u32,
    /// Index of the hop it takes next, and its route's length (0: not routed yet).
    pub hop: u16,
    pub hops: u16,
    /// Its path class (the topology's `path_classes`).
    pub path: u8,
}

pub struct Packets {
    pub rec: Vec<Packet>,
    /// Routes, `stride` hops per packet id.
    route: Vec<Hop>,
    stride: usize,
    free: Vec<u32>,
}

impl Packets {
    /// Packets whose routes have at most `max_hops` hops.
    pub fn new(max_hops: usize) -> Self {
        Self {
            rec: Vec::new(),
            route: Vec::new(),
            stride: max_hops,
            free: Vec::new(),
        }
    }

    /// A new, unrouted packet.
    pub fn add(&mut self, msg: u32, endpoints: (u32, u32), bytes: u32, ready: Time) -> u32 {
        let packet = Packet {
            ready,
            tail: ready,
            stalled: -1.0,
            msg,
            endpoints,
            bytes,
            next: NONE,
            hop: 0,
            hops: 0,
            path: 0,
        };
        if let Some(p) = self.free.pop() {
            self.rec[p as usize] = packet;
            return p;
        }
        self.rec.push(packet);
        self.route
            .resize(self.rec.len() * self.stride, Hop { link: 0, class: 0 });
        self.rec.len() as u32 - 1
    }

    pub fn remove(&mut self, p: u32) {
        self.free.push(p);
    }

    pub fn set_route(&mut self, p: u32, hops: &[Hop]) {
        assert!(
            hops.len() <= self.stride,
            "a route of {} hops (the topology promised at most {})",
            hops.len(),
            self.stride
        );
        let at = p as usize * self.stride;
        self.route[at..at + hops.len()].copy_from_slice(hops);
        self.rec[p as usize].hops = hops.len() as u16;
    }

    pub fn route(&self, p: u32) -> &[Hop] {
        let at = p as usize * self.stride;
        &self.route[at..at + usize::from(self.rec[p as usize].hops)]
    }

    /// The hop a packet takes next.
    pub fn next_hop(&self, p: u32) -> Hop {
        let r = &self.rec[p as usize];
        self.route[p as usize * self.stride + usize::from(r.hop)]
    }

    /// Whether its next hop is the last (into its destination endpoint).
    pub fn last_hop(&self, p: u32) -> bool {
        let r = &self.rec[p as usize];
        r.hop + 1 == r.hops
    }
}

/// A message (transfer) cut into packets: delivered when its last packet is.
#[derive(Debug, Clone, Copy)]
pub struct Message {
    pub id: TransferId,
    pub endpoints: (u32, u32),
    pub bytes: u64,
    pub submitted: Time,
    /// Packets not yet delivered, and packets made and queued at the source so far.
    pub packets_left: u32,
    pub packets_queued: u32,
    /// When it would be delivered on an idle network (the flow model's zero-load time).
    pub zero_load_at: Time,
    pub hops: u32,
    /// Highest path class among its packets (non-minimal if any went so).
    pub path: u8,
    pub credit_stalls: u32,
}
