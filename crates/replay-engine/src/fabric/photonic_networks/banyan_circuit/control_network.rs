//! Gemini's electrical control network (seed 003 §3, §4.1): a packet-switched Banyan of the
//! optical network's shape. A signal of l_sig bytes takes t_sig = l_sig / BW_e to enter a
//! link; each switch processes it in α_sig·t_sig and queues it on the output link it leaves
//! by (FIFO output buffers, Fig. 10). Without queueing a signal arrives
//! t_sig((1 + α_sig) log2 N + 1) after it was sent (Eq. 3). Processing is a delay per signal
//! (pipelined), so signals queue only on links. Outputs are wired back to their input
//! terminals (Fig. 11): a reply from D to S crosses the network from input D to output S.
//!
//! The caller schedules the hops (one event heap keeps the model's instants in order):
//! `send` → reaches stage 0; `processed_at` → the switch acts on it (`hop` says where);
//! `forward` → reaches the next stage, and after the last one its destination terminal.

use super::banyan::{Banyan, Hop};
use crate::fabric::slab::Slab;
use crate::fabric::Time;

/// What a signal is (§4: setup, ackSetup, block, teardown) or a data packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sig {
    Setup,
    Ack,
    Block,
    Teardown,
    /// A packet on the electrical network (small message, MPI control).
    Packet,
}

#[derive(Debug, Clone, Copy)]
pub struct Signal {
    pub kind: Sig,
    pub from: u32,
    pub to: u32,
    /// The caller's reference (circuit attempt or message).
    pub of: u32,
    pub bytes: u64,
    pub sent: Time,
}

pub struct ControlNetwork {
    banyan: Banyan,
    /// Bytes per ns of every electrical link.
    rate: f64,
    signal_bytes: u64,
    alpha_sig: f64,
    /// Busy-until of every link: terminal injection links, then each stage's output links
    /// by row.
    link_free: Vec<Time>,
    signals: Slab<Signal>,
}

impl ControlNetwork {
    pub fn new(banyan: Banyan, rate: f64, signal_bytes: u64, alpha_sig: f64) -> Self {
        let links = (banyan.ports() * (banyan.stages() + 1)) as usize;
        Self {
            banyan,
            rate,
            signal_bytes,
            alpha_sig,
            link_free: vec![0.0; links],
            signals: Slab::new(),
        }
    }

    pub fn banyan(&self) -> &Banyan {
        &self.banyan
    }

    /// t_sig = l_sig / BW_e.
    pub fn t_sig(&self) -> f64 {
        self.signal_bytes as f64 / self.rate
    }

    /// Eq. 3: a control signal's latency without queueing.
    pub fn min_latency(&self) -> f64 {
        self.t_sig() * ((1.0 + self.alpha_sig) * f64::from(self.banyan.stages()) + 1.0)
    }

    /// A packet of `bytes` without queueing: log2 N + 1 links, log2 N processings.
    pub fn min_packet_latency(&self, bytes: u64) -> f64 {
        let stages = f64::from(self.banyan.stages());
        (stages + 1.0) * bytes as f64 / self.rate + stages * self.alpha_sig * self.t_sig()
    }

    /// Queues a signal on its source terminal's link; returns it and when it reaches stage 0.
    pub fn send(&mut self, signal: Signal) -> (u32, Time) {
        let at = self.serve(signal.from as usize, signal.sent, signal.bytes);
        (self.signals.add(signal), at)
    }

    /// When a switch reached at `t` has processed a signal.
    pub fn processed_at(&self, t: Time) -> Time {
        t + self.alpha_sig * self.t_sig()
    }

    /// Where signal `s` crosses the switch of stage `k`.
    pub fn hop(&self, s: u32, k: u32) -> Hop {
        let sig = &self.signals[s];
        self.banyan.hop(sig.from, sig.to, k)
    }

    /// Queues signal `s`, processed by stage `k` at `t`, on that switch's output link;
    /// returns when it reaches stage k + 1 (or, after the last stage, its terminal).
    pub fn forward(&mut self, s: u32, k: u32, t: Time) -> Time {
        let row = self.hop(s, k).row;
        let link = ((k + 1) * self.banyan.ports() + row) as usize;
        self.serve(link, t, self.signals[s].bytes)
    }

    pub fn signal(&self, s: u32) -> &Signal {
        &self.signals[s]
    }

    /// Signal `s` has arrived: forget it.
    pub fn take(&mut self, s: u32) -> Signal {
        let sig = self.signals[s];
        self.signals.remove(s);
        sig
    }

    fn serve(&mut self, link: usize, now: Time, bytes: u64) -> Time {
        let start = now.max(self.link_free[link]);
        self.link_free[link] = start + bytes as f64 / self.rate;
        self.link_free[link]
    }
}
