//! MPI matching queues. User messages: per receiver, envelopes that arrived before a
//! matching receive (unexpected) and receives posted before a matching envelope. A posted
//! receive takes the first queued envelope that fits (source or ANY_SOURCE, tag or
//! ANY_TAG, same communicator); an envelope takes the first posted receive that fits.
//! Collective-internal messages use FIFO channels per (receiver, sender, communicator).

use std::collections::VecDeque;

use super::messages::{Messages, Msg};
use crate::trace::{ANY_SOURCE, ANY_TAG};
use fast_hash::FastMap;

#[derive(Debug, Clone, Copy)]
pub struct Posted {
    pub req: u32,
    /// Global source rank or ANY_SOURCE.
    pub src: i64,
    pub tag: i32,
    pub comm: i32,
}

#[derive(Debug, Clone, Copy)]
pub struct CollEntry {
    pub is_recv: bool,
    /// Request slot (receive) or message slot (send).
    pub id: u32,
    pub inst: u64,
}

pub struct Matching {
    pub unexpected: Vec<VecDeque<u32>>,
    pub posted: Vec<VecDeque<Posted>>,
    pub coll_chan: FastMap<(u32, u32, i32), VecDeque<CollEntry>>,
}

/// Removes entry `i` of a matching queue (usually the front one).
#[inline]
fn take_at<T>(queue: &mut VecDeque<T>, i: usize) -> T {
    if i == 0 {
        queue.pop_front()
    } else {
        queue.remove(i)
    }
    .expect("found")
}

impl Matching {
    pub fn new(ranks: usize) -> Self {
        Self {
            unexpected: vec![VecDeque::new(); ranks],
            posted: vec![VecDeque::new(); ranks],
            coll_chan: FastMap::default(),
        }
    }

    /// A receive posted on `me`: the unexpected envelope it takes, or it is queued.
    pub fn post_recv(&mut self, me: u32, p: Posted, msgs: &Messages) -> Option<u32> {
        let queue = &mut self.unexpected[me as usize];
        let hit = queue.iter().position(|&m| {
            let m = &msgs[m];
            m.comm == p.comm
                && (p.src == i64::from(ANY_SOURCE) || i64::from(m.src) == p.src)
                && (p.tag == ANY_TAG || m.tag == p.tag)
        });
        match hit {
            Some(i) => Some(take_at(queue, i)),
            None => {
                self.posted[me as usize].push_back(p);
                None
            }
        }
    }

    /// A user message `m` sent: the posted receive it takes, or it waits as unexpected.
    pub fn post_send(&mut self, m: u32, msg: &Msg) -> Option<u32> {
        let (dst, src, comm, tag) = (msg.dst, i64::from(msg.src), msg.comm, msg.tag);
        let queue = &mut self.posted[dst as usize];
        let hit = queue.iter().position(|p| {
            p.comm == comm
                && (p.src == i64::from(ANY_SOURCE) || p.src == src)
                && (p.tag == ANY_TAG || p.tag == tag)
        });
        match hit {
            Some(i) => Some(take_at(queue, i).req),
            None => {
                self.unexpected[dst as usize].push_back(m);
                None
            }
        }
    }

    /// A collective message: the receive waiting on its channel, or it is queued.
    pub fn coll_send(&mut self, m: u32, msg: &Msg) -> Option<CollEntry> {
        let queue = self
            .coll_chan
            .entry((msg.dst, msg.src, msg.comm))
            .or_default();
        if queue.front().is_some_and(|e| e.is_recv) {
            return queue.pop_front();
        }
        queue.push_back(CollEntry {
            is_recv: false,
            id: m,
            inst: msg.inst,
        });
        None
    }

    /// A collective receive: the message waiting on its channel, or it is queued.
    pub fn coll_recv(
        &mut self,
        me: u32,
        src: u32,
        comm: i32,
        inst: u64,
        req: u32,
    ) -> Option<CollEntry> {
        let queue = self.coll_chan.entry((me, src, comm)).or_default();
        if queue.front().is_some_and(|e| !e.is_recv) {
            return queue.pop_front();
        }
        queue.push_back(CollEntry {
            is_recv: true,
            id: req,
            inst,
        });
        None
    }
}
