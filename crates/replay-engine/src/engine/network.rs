//! The engine's side of the fabric: the fabric itself, what the engine asks it once and
//! caches (the shortcuts that keep contention-free replays fast), host costs, and the
//! transfer ids messages and background traffic use.

use crate::config::ReplayOptions;
use crate::error::ReplayError;
use crate::fabric::host::HostParams;
use crate::fabric::registry::Built;
use crate::fabric::{Delivery, Demand, Fabric, Submitted, Time, Transfer, TransferId};
use fast_hash::FastMap;

/// Transfer id of message slot `m` (even ids; background transfers use odd ones, so the
/// two slabs share the fabric's compact id space).
#[inline]
pub(super) fn message_id(m: u32) -> TransferId {
    m << 1
}

#[inline]
pub(super) fn background_id(slot: u32) -> TransferId {
    slot << 1 | 1
}

/// (is background, slab slot) of a transfer id.
#[inline]
pub(super) fn slot_of(id: TransferId) -> (bool, u32) {
    (id & 1 == 1, id >> 1)
}

pub(super) struct Network {
    fabric: Box<dyn Fabric>,
    /// `fabric.holds_transfers()`, asked once.
    pub holds_transfers: bool,
    /// `fabric.alpha_beta()`, asked once: a transfer then costs α + nβ, computed here.
    pub alpha_beta: Option<(f64, f64)>,
    /// `fabric.control_at_once()`, asked once.
    pub control_at_once: bool,
    /// On such a fabric, the latency of control messages per (source, destination)
    /// endpoint, asked once per pair: a rendezvous then costs no fabric call for its RTS
    /// and CTS.
    control_latency: FastMap<(u32, u32), Time>,
    /// `fabric.serves_in_post_order()`, asked once.
    pub post_order: bool,
    pub host: HostParams,
    /// Rendezvous messages pay an RTS/CTS handshake (`Built::handshake`).
    pub handshake: bool,
    /// The host model's, or the replay's override.
    pub eager_threshold: u64,
    /// `fabric.next_time()` as last asked, until a submit or advance may change it (None:
    /// ask again). The engine asks before every event and after every row; most of those
    /// instants submitted nothing, and skipping the call skips a settle check too.
    next: Option<Option<Time>>,
    delivered: Vec<Delivery>,
}

impl Network {
    pub fn new(
        built: Built,
        host: HostParams,
        options: &ReplayOptions,
    ) -> Result<Self, ReplayError> {
        let Built { fabric, handshake } = built;
        let host_values = [
            host.overhead_ns,
            host.overhead_ns_per_byte,
            host.gamma_ns_per_byte,
        ];
        if host_values.iter().any(|v| !v.is_finite() || *v < 0.0) {
            return Err(ReplayError::BadConfig(
                "host costs must be finite and >= 0".into(),
            ));
        }
        let eager_threshold = options
            .eager_threshold_bytes
            .unwrap_or(host.eager_threshold_bytes);
        Ok(Self {
            holds_transfers: fabric.holds_transfers(),
            alpha_beta: fabric.alpha_beta(),
            control_at_once: fabric.control_at_once(),
            control_latency: FastMap::default(),
            post_order: fabric.serves_in_post_order(),
            fabric,
            host,
            handshake,
            eager_threshold,
            next: None,
            delivered: Vec::new(),
        })
    }

    pub fn fabric(&self) -> &dyn Fabric {
        self.fabric.as_ref()
    }

    /// Hands the synthetic background's mean traffic to a fabric that represents it so.
    pub fn background_load(&mut self, demands: &[Demand]) {
        self.next = None;
        self.fabric.background_load(demands);
    }

    /// Closed-form collectives need α-β costs and no handshake.
    pub fn allows_closed_forms(&self) -> bool {
        !self.handshake && self.alpha_beta.is_some()
    }

    #[inline]
    pub fn overhead(&self, bytes: u64) -> Time {
        self.host.overhead_ns + bytes as f64 * self.host.overhead_ns_per_byte
    }

    #[inline]
    pub fn submit(&mut self, now: Time, t: &Transfer) -> Submitted {
        // A control transfer leaves a `control_at_once` fabric's state alone.
        if !(self.control_at_once && t.kind.is_control()) {
            self.next = None;
        }
        self.fabric.submit(now, t)
    }

    #[inline]
    pub fn next_time(&mut self) -> Option<Time> {
        match self.next {
            Some(t) => t,
            None => {
                let t = self.fabric.next_time();
                self.next = Some(t);
                t
            }
        }
    }

    pub fn advance(&mut self, now: Time, out: &mut Vec<Delivery>) {
        self.next = None;
        self.fabric.advance(now, out);
    }

    /// The latency of a control transfer from endpoint `src` to `dst` on a
    /// `control_at_once` fabric, if asked before (see `ask_control_latency`).
    #[inline]
    pub fn control_latency(&self, src: u32, dst: u32) -> Option<Time> {
        self.control_latency.get(&(src, dst)).copied()
    }

    /// Asks a `control_at_once` fabric the latency of control transfer `t`'s endpoints
    /// once: it answers `now + d` with d fixed by the endpoints, so d is its answer at
    /// time 0.
    #[cold]
    pub fn ask_control_latency(&mut self, t: &Transfer) -> Time {
        let Submitted::At(d) = self.fabric.submit(0.0, t) else {
            unreachable!("control_at_once fabrics answer at once")
        };
        self.control_latency.insert((t.src, t.dst), d);
        d
    }

    /// The delivery buffer, to fill while the engine borrows itself mutably.
    pub fn take_delivered(&mut self) -> Vec<Delivery> {
        std::mem::take(&mut self.delivered)
    }

    pub fn give_back_delivered(&mut self, mut buf: Vec<Delivery>) {
        buf.clear();
        self.delivered = buf;
    }
}
