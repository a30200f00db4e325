//! Point-to-point semantics: requests, eager and rendezvous protocols, and MPI matching.
//!
//! Matching is decided when a send is posted (its envelope enters the receiver's queue in
//! simulated-time order), which keeps MPI's non-overtaking rule per (communicator, source)
//! whatever order the fabric delivers data in. A posted receive takes the first queued
//! envelope that fits (source or ANY_SOURCE, tag or ANY_TAG, same communicator); an envelope
//! takes the first posted receive that fits. Collective-internal messages use separate FIFO
//! channels per (receiver, sender, communicator) and carry their collective instance.
//!
//! Costs: eager — the sender is done after its overhead o + nO, the data leaves then, the
//! receiver is done o + nO after the data arrived and the receive was posted. Rendezvous —
//! the request-to-send takes a control latency, the clear-to-send another once matched,
//! then the data moves; both sides finish when it arrived (+ o + nO at the receiver). The
//! α-β-γ form has no handshake: data moves as soon as both sides are posted.

use super::state::{Msg, RState, Req, NONE, USER};
use super::{Engine, Ev};
use crate::error::ReplayError;
use crate::fabric::{Submitted, Time};
use crate::trace::{ANY_SOURCE, ANY_TAG};

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

/// Removes entry `i` of a matching queue (usually the front one).
#[inline]
fn take_at<T>(queue: &mut std::collections::VecDeque<T>, i: usize) -> T {
    if i == 0 {
        queue.pop_front()
    } else {
        queue.remove(i)
    }
    .expect("found")
}

/// Where a send goes (None = MPI_PROC_NULL).
pub type Dest = Option<u32>;

impl Engine {
    pub(super) fn new_req(&mut self, owner: u32) -> u32 {
        let req = Req {
            owner,
            gen: 0,
            done_at: f64::NAN,
            waited: false,
            consumed: false,
            live: true,
        };
        match self.free_reqs.pop() {
            Some(slot) => {
                let gen = self.reqs[slot as usize].gen.wrapping_add(1);
                self.reqs[slot as usize] = Req { gen, ..req };
                slot
            }
            None => {
                self.reqs.push(req);
                (self.reqs.len() - 1) as u32
            }
        }
    }

    fn free_req(&mut self, slot: u32) {
        self.reqs[slot as usize].live = false;
        self.free_reqs.push(slot);
    }

    /// Marks a request consumed by a wait/test; frees it once done.
    pub(super) fn consume(&mut self, slot: u32) {
        let req = &mut self.reqs[slot as usize];
        req.consumed = true;
        if req.is_done() {
            self.free_req(slot);
        }
    }

    /// The request is known to complete at `at` (>= now; contention-free fabrics let the
    /// engine know completions ahead of time, without an event per message).
    pub(super) fn complete_req(&mut self, slot: u32, at: Time) {
        let req = &mut self.reqs[slot as usize];
        debug_assert!(!req.is_done());
        req.done_at = at;
        let (owner, waited, consumed) = (req.owner, req.waited, req.consumed);
        if waited {
            let rank = &mut self.ranks[owner as usize];
            match rank.state {
                RState::Blocked {
                    pending,
                    latest,
                    any: false,
                } => {
                    self.reqs[slot as usize].waited = false;
                    let latest = latest.max(at);
                    if pending == 1 {
                        rank.state = RState::Woken;
                        self.push(latest, Ev::Resume(owner));
                    } else {
                        rank.state = RState::Blocked {
                            pending: pending - 1,
                            latest,
                            any: false,
                        };
                    }
                }
                // Which request ends a waitany is decided when the first completion instant
                // comes, not when a completion becomes known.
                RState::Blocked { any: true, .. } => {
                    self.push(at, Ev::Signal(slot));
                    return;
                }
                _ => self.reqs[slot as usize].waited = false,
            }
        }
        if consumed {
            self.free_req(slot);
        }
    }

    /// A waitany target completes now: if the rank still waits, this request ends the wait.
    pub(super) fn on_signal(&mut self, slot: u32, t: Time) {
        let req = self.reqs[slot as usize];
        // A stale signal (the slot was reused) can only match a request that is itself
        // done at this instant and waited for, which then rightly ends the wait.
        if !(req.live && req.waited && req.done_at == t) {
            return;
        }
        let owner = req.owner;
        let rank = &mut self.ranks[owner as usize];
        for &s in &rank.waiting {
            self.reqs[s as usize].waited = false;
        }
        rank.waiting.clear();
        rank.state = RState::Woken;
        self.consume(slot);
        self.push(t, Ev::Resume(owner));
    }

    fn new_msg(&mut self, m: Msg) -> u32 {
        self.stats.messages += 1;
        match self.free_msgs.pop() {
            Some(slot) => {
                self.msgs[slot as usize] = m;
                slot
            }
            None => {
                self.msgs.push(m);
                (self.msgs.len() - 1) as u32
            }
        }
    }

    fn overhead(&self, bytes: u64) -> Time {
        self.host.overhead_ns + bytes as f64 * self.host.overhead_ns_per_byte
    }

    fn endpoint(&self, rank: u32) -> u32 {
        self.ranks[rank as usize].endpoint
    }

    /// Posts a send from global rank `src` at `now`; returns its request.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn post_send(
        &mut self,
        src: u32,
        dst: Dest,
        bytes: u64,
        tag: i32,
        comm: i32,
        inst: u64,
        sync: bool,
    ) -> u32 {
        let now = self.now;
        let req = self.new_req(src);
        let Some(dst) = dst else {
            self.complete_req(req, now);
            return req;
        };
        let o = self.overhead(bytes);
        let rndv = sync || bytes > self.eager_threshold;
        let rts_at = if rndv && self.host.handshake {
            let (a, b) = (self.endpoint(src), self.endpoint(dst));
            now + o + self.fabric.control_latency(a, b) + self.host.overhead_ns
        } else {
            now
        };
        let m = self.new_msg(Msg {
            src,
            dst,
            bytes,
            comm,
            tag,
            inst,
            send_req: req,
            recv_req: NONE,
            rndv,
            matched: false,
            rts_at,
            delivered_at: f64::NAN,
        });
        if !rndv {
            self.complete_req(req, now + o);
            if o > 0.0 {
                self.push(now + o, Ev::Inject(m));
            } else {
                self.inject(m);
            }
        }
        if inst == USER {
            self.match_user_send(m);
        } else {
            self.match_coll_send(m);
        }
        req
    }

    /// Posts a receive on global rank `me` (src: global rank, ANY_SOURCE, or None = PROC_NULL).
    pub(super) fn post_recv(
        &mut self,
        me: u32,
        src: Option<i64>,
        tag: i32,
        comm: i32,
        inst: u64,
    ) -> u32 {
        let req = self.new_req(me);
        let Some(src) = src else {
            self.complete_req(req, self.now);
            return req;
        };
        if inst != USER {
            self.match_coll_recv(me, src as u32, comm, inst, req);
            return req;
        }
        let queue = &mut self.unexpected[me as usize];
        let msgs = &self.msgs;
        let hit = queue.iter().position(|&m| {
            let m = &msgs[m as usize];
            m.comm == comm
                && (src == i64::from(ANY_SOURCE) || i64::from(m.src) == src)
                && (tag == ANY_TAG || m.tag == tag)
        });
        match hit {
            Some(i) => {
                let m = take_at(queue, i);
                self.on_match(m, req);
            }
            None => self.posted[me as usize].push_back(Posted {
                req,
                src,
                tag,
                comm,
            }),
        }
        req
    }

    fn match_user_send(&mut self, m: u32) {
        let msg = &self.msgs[m as usize];
        let (dst, src, comm, tag) = (msg.dst, i64::from(msg.src), msg.comm, msg.tag);
        let queue = &mut self.posted[dst as usize];
        let hit = queue.iter().position(|p| {
            p.comm == comm
                && (p.src == i64::from(ANY_SOURCE) || p.src == src)
                && (p.tag == ANY_TAG || p.tag == tag)
        });
        match hit {
            Some(i) => {
                let p = take_at(queue, i);
                self.on_match(m, p.req);
            }
            None => self.unexpected[dst as usize].push_back(m),
        }
    }

    fn match_coll_send(&mut self, m: u32) {
        let msg = self.msgs[m as usize];
        let queue = self
            .coll_chan
            .entry((msg.dst, msg.src, msg.comm))
            .or_default();
        if queue.front().is_some_and(|e| e.is_recv) {
            let e = queue.pop_front().expect("front");
            self.check_instance(e.inst, msg.inst, msg.src, msg.dst);
            self.on_match(m, e.id);
        } else {
            queue.push_back(CollEntry {
                is_recv: false,
                id: m,
                inst: msg.inst,
            });
        }
    }

    fn match_coll_recv(&mut self, me: u32, src: u32, comm: i32, inst: u64, req: u32) {
        let queue = self.coll_chan.entry((me, src, comm)).or_default();
        if queue.front().is_some_and(|e| !e.is_recv) {
            let e = queue.pop_front().expect("front");
            self.check_instance(inst, e.inst, src, me);
            self.on_match(e.id, req);
        } else {
            queue.push_back(CollEntry {
                is_recv: true,
                id: req,
                inst,
            });
        }
    }

    fn check_instance(&mut self, want: u64, got: u64, src: u32, dst: u32) {
        if want != got && self.fatal.is_none() {
            let message = format!(
                "collective schedules disagree: rank {dst} expected a message of collective \
                 #{want} from rank {src}, got one of collective #{got}"
            );
            self.fatal = Some(ReplayError::BadConfig(message));
        }
    }

    /// Send `m` and receive `req` are paired at `now`.
    fn on_match(&mut self, m: u32, req: u32) {
        let now = self.now;
        let msg = &mut self.msgs[m as usize];
        msg.recv_req = req;
        msg.matched = true;
        let (rndv, delivered_at, bytes, rts_at) =
            (msg.rndv, msg.delivered_at, msg.bytes, msg.rts_at);
        let (src, dst) = (msg.src, msg.dst);
        if !rndv {
            if !delivered_at.is_nan() {
                let at = now.max(delivered_at) + self.overhead(bytes);
                self.complete_req(req, at);
                self.free_msgs.push(m);
            }
            return;
        }
        let ready = now.max(rts_at);
        let start = if self.host.handshake {
            let (a, b) = (self.endpoint(dst), self.endpoint(src));
            ready
                + self.host.overhead_ns
                + self.fabric.control_latency(a, b)
                + self.host.overhead_ns
        } else {
            ready
        };
        if start > now {
            self.push(start, Ev::Inject(m));
        } else {
            self.inject(m);
        }
    }

    /// The message's data enters the fabric now.
    pub(super) fn inject(&mut self, m: u32) {
        let msg = &self.msgs[m as usize];
        if let Some((alpha, beta)) = self.alpha_beta {
            // The fabric's answer (see `Fabric::alpha_beta`), without asking it.
            let t = self.now + alpha + msg.bytes as f64 * beta;
            self.on_deliver(m, t);
            return;
        }
        let (a, b, bytes) = (self.endpoint(msg.src), self.endpoint(msg.dst), msg.bytes);
        if let Submitted::At(t) = self.fabric.submit(self.now, m, a, b, bytes) {
            // Known delivery time: apply it now (closed form, no event per message).
            self.on_deliver(m, t);
        }
    }

    /// The message's last byte arrived at `t`.
    pub(super) fn on_deliver(&mut self, m: u32, t: Time) {
        let msg = &self.msgs[m as usize];
        let (rndv, matched, send_req, recv_req) =
            (msg.rndv, msg.matched, msg.send_req, msg.recv_req);
        let o = self.overhead(msg.bytes);
        if rndv {
            self.complete_req(send_req, t);
            self.complete_req(recv_req, t + o);
            self.free_msgs.push(m);
        } else if matched {
            self.complete_req(recv_req, t + o);
            self.free_msgs.push(m);
        } else {
            self.msgs[m as usize].delivered_at = t;
        }
    }
}
