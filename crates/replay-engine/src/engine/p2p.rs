//! Point-to-point semantics: requests, eager and rendezvous protocols, and MPI matching.
//!
//! Matching is decided when a send is posted (its envelope enters the receiver's queue in
//! simulated-time order), which keeps MPI's non-overtaking rule per (communicator, source)
//! whatever order the fabric delivers data in (matching.rs holds the queues).
//!
//! Costs: eager — the sender is done after its overhead o + nO, the data leaves then, the
//! receiver is done o + nO after the data arrived and the receive was posted. Rendezvous —
//! the request-to-send (RTS) leaves after o + nO and is processed o after it arrived; once
//! matched, the receiver's clear-to-send (CTS) leaves o later and is processed o after it
//! arrived; then the data moves; both sides finish when it arrived (+ o + nO at the
//! receiver). RTS and CTS are transfers on the fabric (kind Rts / Cts), so a contended
//! control plane delays them and a circuit fabric can start its setup on the RTS. The α-β-γ
//! form has no handshake: data moves as soon as both sides are posted.

use super::core::{Engine, Ev};
use super::matching::Posted;
use super::messages::{Msg, Origin, USER};
use super::network::{message_id, slot_of};
use super::ranks::{RState, RankRt};
use crate::error::ReplayError;
use crate::fabric::{Delivery, Kind, Submitted, Time, Transfer, TransferInfo};

/// Where a send goes (None = MPI_PROC_NULL).
pub type Dest = Option<u32>;

impl Engine {
    /// Marks a request consumed by a wait/test; frees it once done.
    pub(super) fn consume(&mut self, slot: u32) {
        let req = &mut self.reqs[slot];
        req.consumed = true;
        if req.is_done() {
            self.reqs.release(slot);
        }
    }

    /// The request is known to complete at `at` (>= now; contention-free fabrics let the
    /// engine know completions ahead of time, without an event per message).
    #[inline]
    pub(super) fn complete_req(&mut self, slot: u32, at: Time) {
        let req = &mut self.reqs[slot];
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
                    self.reqs[slot].waited = false;
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
                _ => self.reqs[slot].waited = false,
            }
        }
        if consumed {
            self.reqs.release(slot);
        }
    }

    /// A waitany target completes now: if the rank still waits, this request ends the wait.
    pub(super) fn on_signal(&mut self, slot: u32, t: Time) {
        let req = self.reqs[slot];
        // A stale signal (the slot was reused) can only match a request that is itself
        // done at this instant and waited for, which then rightly ends the wait.
        if !(req.live && req.waited && req.done_at == t) {
            return;
        }
        let owner = req.owner;
        let rank = &mut self.ranks[owner as usize];
        for &s in &rank.waiting {
            self.reqs[s].waited = false;
        }
        rank.waiting.clear();
        rank.state = RState::Woken;
        self.consume(slot);
        self.push(t, Ev::Resume(owner));
    }

    /// Posts a send from global rank `src` at `now`; returns its request and when the
    /// sender's overhead for it is done.
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
    ) -> (u32, Time) {
        let now = self.now;
        let req = self.reqs.open(src);
        let Some(dst) = dst else {
            self.complete_req(req, now);
            // An isend charges its rank o even to MPI_PROC_NULL (as replays always did).
            return (req, self.cpu_work(src, now, self.net.overhead(bytes)));
        };
        let o = self.net.overhead(bytes);
        let sent = self.cpu_work(src, now, o); // o, stretched by host detours
        let rndv = sync || bytes > self.net.eager_threshold;
        self.stats.messages += 1;
        let m = self.msgs.open(Msg {
            src,
            dst,
            bytes,
            comm,
            tag,
            inst,
            send_req: req,
            recv_req: u32::MAX,
            posted: self.reqs[req].posted,
            matched: false,
            rts_at: now,
            delivered_at: f64::NAN,
            kind: if rndv { Kind::Rendezvous } else { Kind::Eager },
        });
        if self.records.is_some() {
            let send_seq = self.ranks[src as usize].rows.current().seq;
            let origin = Origin {
                posted_at: now,
                send_seq,
            };
            self.msgs.set_origin(m, origin);
        }
        if rndv && self.net.handshake {
            self.msgs[m].kind = Kind::Rts;
            self.msgs[m].rts_at = f64::NAN;
            self.schedule_control(m, sent);
        } else if !rndv {
            self.complete_req(req, sent);
        }
        if inst == USER {
            if let Some(recv) = self.matching.post_send(m, &self.msgs[m]) {
                self.on_match(m, recv);
            }
        } else if let Some(e) = self.matching.coll_send(m, &self.msgs[m]) {
            self.check_instance(e.inst, inst, src, dst);
            self.on_match(m, e.id);
        }
        // Eager data leaves after matching, so a receive already posted is known to the
        // fabric (ports serve by it); a matched eager message completes on delivery.
        if !rndv {
            if o > 0.0 || sent > now {
                self.push(sent, Ev::Inject(m));
            } else {
                self.inject(m);
            }
        }
        (req, sent)
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
        let req = self.reqs.open(me);
        let Some(src) = src else {
            self.complete_req(req, self.now);
            return req;
        };
        if inst != USER {
            if let Some(e) = self.matching.coll_recv(me, src as u32, comm, inst, req) {
                self.check_instance(inst, e.inst, src as u32, me);
                self.on_match(e.id, req);
            }
            return req;
        }
        let posted = Posted {
            req,
            src,
            tag,
            comm,
        };
        if let Some(m) = self.matching.post_recv(me, posted, &self.msgs) {
            self.on_match(m, req);
        }
        req
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
        let msg = &mut self.msgs[m];
        msg.recv_req = req;
        msg.matched = true;
        let (rndv, delivered_at, bytes, rts_at, dst) =
            (msg.rndv(), msg.delivered_at, msg.bytes, msg.rts_at, msg.dst);
        if !rndv {
            if !delivered_at.is_nan() {
                let o = self.net.overhead(bytes);
                let at = self.cpu_overhead(dst, now.max(delivered_at), o);
                self.complete_req(req, at);
                self.msgs.release(m);
            }
            return;
        }
        if !rts_at.is_nan() {
            self.clear_to_send(m);
        } // else: the RTS is still on its way; its arrival continues here.
    }

    /// A matched rendezvous whose RTS was processed: the receiver answers with a CTS (or,
    /// without handshake, the data goes at once).
    #[inline]
    fn clear_to_send(&mut self, m: u32) {
        let now = self.now;
        let ready = now.max(self.msgs[m].rts_at);
        if !self.net.handshake {
            if ready > now {
                self.push(ready, Ev::Inject(m));
            } else {
                self.inject(m);
            }
            return;
        }
        self.msgs[m].kind = Kind::Cts;
        let at = self.cpu_overhead(self.msgs[m].dst, ready, self.net.host.overhead_ns);
        self.schedule_control(m, at);
    }

    /// The message's RTS or CTS (by its phase) leaves at `at`.
    fn schedule_control(&mut self, m: u32, at: Time) {
        if self.net.control_at_once {
            // The fabric answers control messages at once and statelessly: ask ahead.
            let (src, dst) = self.endpoints(m);
            let d = match self.net.control_latency(src, dst) {
                Some(d) => d,
                None => {
                    let t = self.transfer(m);
                    self.net.ask_control_latency(&t)
                }
            };
            self.control_arrived(m, at + d);
        } else if at > self.now {
            self.push(at, Ev::Control(m));
        } else {
            self.send_control(m);
        }
    }

    /// The control message of `m` enters the fabric now.
    pub(super) fn send_control(&mut self, m: u32) {
        let t = self.transfer(m);
        if let Submitted::At(arrival) = self.net.submit(self.now, &t) {
            self.control_arrived(m, arrival);
        }
    }

    /// The control message of `m` arrived at `t` (>= now).
    fn control_arrived(&mut self, m: u32, t: Time) {
        let o = self.net.host.overhead_ns;
        let msg = &mut self.msgs[m];
        let phase = std::mem::replace(&mut msg.kind, Kind::Rendezvous);
        let (src, dst) = (msg.src, msg.dst);
        match phase {
            Kind::Rts => {
                let processed = self.cpu_overhead(dst, t, o);
                let msg = &mut self.msgs[m];
                msg.rts_at = processed;
                if msg.matched {
                    self.clear_to_send(m);
                }
            }
            Kind::Cts => {
                let start = self.cpu_overhead(src, t, o);
                if start > self.now {
                    self.push(start, Ev::Inject(m));
                } else {
                    self.inject(m);
                }
            }
            other => unreachable!("control arrival of a message in phase {other:?}"),
        }
    }

    /// Source and destination endpoints of message `m`'s transfer in its current phase (the
    /// CTS goes from the receiver back to the sender).
    #[inline]
    fn endpoints(&self, m: u32) -> (u32, u32) {
        let msg = &self.msgs[m];
        let (s, d) = (&self.ranks[msg.src as usize], &self.ranks[msg.dst as usize]);
        phase_endpoints(msg.kind, s, d)
    }

    /// The fabric transfer of message `m` in its current phase.
    #[inline]
    fn transfer(&self, m: u32) -> Transfer {
        let msg = &self.msgs[m];
        let (s, d) = (&self.ranks[msg.src as usize], &self.ranks[msg.dst as usize]);
        let kind = msg.kind;
        let (src, dst) = phase_endpoints(kind, s, d);
        Transfer {
            id: message_id(m),
            src,
            dst,
            bytes: msg.bytes,
            kind,
            collective: msg.inst != USER,
            job: s.job,
            src_rank: s.local,
            dst_rank: d.local,
            tag: msg.tag,
            send_posted: msg.posted,
            // A matched receive stays pending until the data is delivered.
            recv_posted: if msg.matched && self.net.post_order {
                self.reqs[msg.recv_req].posted
            } else {
                u64::MAX
            },
        }
    }

    /// The message's data enters the fabric now.
    #[inline]
    pub(super) fn inject(&mut self, m: u32) {
        if let Some((alpha, beta)) = self.net.alpha_beta {
            // The fabric's answer (see `Fabric::alpha_beta`), without asking it.
            let t = self.now + alpha + self.msgs[m].bytes as f64 * beta;
            self.on_deliver(m, t, TransferInfo::default());
            return;
        }
        self.submit_data(m);
    }

    /// `inject` on a fabric that must be asked (kept out of line: the α-β path above is
    /// the hot one and stays small enough to inline).
    #[inline(never)]
    fn submit_data(&mut self, m: u32) {
        let t = self.transfer(m);
        if let Submitted::At(at) = self.net.submit(self.now, &t) {
            // Known delivery time: apply it now (closed form, no event per message).
            self.on_deliver(m, at, TransferInfo::default());
        }
    }

    /// The fabric delivered a transfer (message data, control, or background traffic).
    pub(super) fn on_fabric_delivery(&mut self, d: &Delivery) {
        let (background, slot) = slot_of(d.id);
        if background {
            self.background.delivered(slot, &mut self.stats);
        } else if self.msgs[slot].kind.is_control() {
            self.control_arrived(slot, d.at);
        } else {
            self.on_deliver(slot, d.at, d.info);
        }
    }

    /// The message's last byte arrived at `t`.
    #[inline(always)]
    fn on_deliver(&mut self, m: u32, t: Time, info: TransferInfo) {
        if self.records.is_some() {
            self.record_message(m, t, info);
        }
        let msg = &self.msgs[m];
        let (rndv, matched, send_req, recv_req, dst) =
            (msg.rndv(), msg.matched, msg.send_req, msg.recv_req, msg.dst);
        let o = self.net.overhead(msg.bytes);
        if rndv {
            self.complete_req(send_req, t);
            let at = self.cpu_overhead(dst, t, o);
            self.complete_req(recv_req, at);
            self.msgs.release(m);
        } else if matched {
            let at = self.cpu_overhead(dst, t, o);
            self.complete_req(recv_req, at);
            self.msgs.release(m);
        } else {
            self.msgs[m].delivered_at = t;
        }
    }

    #[cold]
    fn record_message(&mut self, m: u32, t: Time, info: TransferInfo) {
        let msg = self.msgs[m];
        let origin = self.msgs.origin(m);
        let (s, d) = (&self.ranks[msg.src as usize], &self.ranks[msg.dst as usize]);
        let kind = msg.kind;
        let row = super::output::MessageRow {
            job: s.job,
            src_rank: s.local,
            send_seq: origin.send_seq,
            dst_rank: d.local,
            bytes: msg.bytes,
            kind: kind as u8,
            collective: msg.inst != USER,
            tag: msg.tag,
            posted_ns: origin.posted_at,
            delivered_ns: t,
            info,
        };
        if let Some(out) = self.records.as_mut() {
            out.push(row);
        }
    }
}

/// Endpoints of a transfer in phase `kind` of a message from rank `s` to rank `d` (the CTS
/// goes from the receiver back to the sender).
#[inline]
fn phase_endpoints(kind: Kind, s: &RankRt, d: &RankRt) -> (u32, u32) {
    if kind == Kind::Cts {
        (d.endpoint, s.endpoint)
    } else {
        (s.endpoint, d.endpoint)
    }
}
