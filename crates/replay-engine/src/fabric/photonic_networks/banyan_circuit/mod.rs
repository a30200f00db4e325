//! The Gemini interconnect (seed 003, Baw et al. 1999): a circuit-switched optical Banyan
//! in parallel with a packet-switched electrical Banyan of the same shape that carries
//! the control signals (and small messages). Model `banyan_circuit`
//! (models/banyan_circuit.rs) carries MPI traffic on it.
//!
//! The electrical side lives in control_network.rs; this module holds the terminals, the
//! optical switches' reservations (banyan.rs) and the protocols.
//!
//! Protocols (§4, §5):
//! - **basic setup–teardown**: the head message of a source's queue sends a *setup* to its
//!   destination; each switch grants it (keeps its state for the path) or sets the
//!   *blocked* flag; the destination answers *ackSetup* or *block*. On ackSetup the source
//!   transmits optically, then sends a *teardown* (switches release the path as it
//!   passes); on block it sends the teardown at once and tries again after `retry_pause`.
//!   A source has one setup outstanding at a time.
//! - **VOQ**: one queue per destination; an idle source sends a *setupBurst*, a setup for
//!   the head of every non-empty queue (from the destination after the last one served).
//!   The first ackSetup is used; any later one is torn down unused; blocks are torn down.
//!   When every setup of a burst was blocked, a new burst follows after the pause.
//!
//! Metrics (§4.3): optical message delay, control signal delay, blocked setups per second,
//! optical utilisation.

use std::collections::VecDeque;

use crate::fabric::slab::Slab;
use crate::fabric::timers::Timers;
use crate::fabric::Time;
use banyan::{Banyan, Reservations};
use control_network::{ControlNetwork, Sig, Signal};

pub mod banyan;
pub mod control_network;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Basic,
    Voq,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeminiParams {
    /// Optical and electrical link rates, bytes per ns.
    pub optical_rate: f64,
    pub electrical_rate: f64,
    /// Control signal length l_sig, bytes.
    pub signal_bytes: u64,
    pub alpha_sig: f64,
    pub protocol: Protocol,
    /// Pause before a blocked source tries again, ns.
    pub retry_pause_ns: f64,
}

impl GeminiParams {
    /// t_sig = l_sig / BW_e.
    pub fn t_sig(&self) -> f64 {
        self.signal_bytes as f64 / self.electrical_rate
    }
}

/// A transfer the interconnect finished.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Done {
    pub token: u32,
    pub at: Time,
    /// Setup round trip of the attempt that got through (optical), ns.
    pub setup_ns: f64,
    pub wait_ns: f64,
    pub blocked: u32,
    pub optical: bool,
}

#[derive(Debug, Clone, Copy)]
struct Attempt {
    msg: u32,
    /// Stages whose switch granted the setup (a prefix of the path).
    granted: u32,
    blocked: bool,
    sent: Time,
}

#[derive(Debug, Clone, Copy)]
struct Msg {
    token: u32,
    src: u32,
    dst: u32,
    bytes: u64,
    submitted: Time,
    blocked: u32,
    setup_ns: f64,
}

impl Msg {
    /// A message submitted at `now`, not yet blocked or set up.
    fn new(now: Time, token: u32, src: u32, dst: u32, bytes: u64) -> Self {
        Self {
            token,
            src,
            dst,
            bytes,
            submitted: now,
            blocked: 0,
            setup_ns: 0.0,
        }
    }
}

#[derive(Debug, Clone, Default)]
struct Terminal {
    /// Basic: one FIFO (index 0); VOQ: one queue per destination.
    queues: Vec<VecDeque<u32>>,
    outstanding: u32,
    transmitting: bool,
    pausing: bool,
    /// VOQ: destination a burst starts from.
    next_dst: u32,
    busy_ns: f64,
}

#[derive(Debug, Clone, Copy)]
enum Ev {
    /// A signal reaches the switch of stage k (k = stages: its destination terminal).
    Reach(u32, u32),
    /// The switch of stage k has processed the signal.
    Processed(u32, u32),
    TransmitEnd(u32),
    Retry(u32),
}

pub struct Gemini {
    p: GeminiParams,
    net: ControlNetwork,
    switches: Reservations,
    terminals: Vec<Terminal>,
    attempts: Slab<Attempt>,
    msgs: Slab<Msg>,
    timers: Timers<Ev>,
    // Counters.
    control_signals: u64,
    control_delay_sum: f64,
    control_delay_max: f64,
    blocked_setups: u64,
    optical_msgs: u64,
    optical_bytes: f64,
    optical_delay_sum: f64,
    packets: u64,
}

impl Gemini {
    pub fn new(ports: u32, p: GeminiParams) -> Result<Self, String> {
        let banyan = Banyan::new(ports)?;
        let queues = match p.protocol {
            Protocol::Basic => 1,
            Protocol::Voq => ports as usize,
        };
        let terminal = Terminal {
            queues: vec![VecDeque::new(); queues],
            ..Terminal::default()
        };
        Ok(Self {
            switches: Reservations::new(banyan.switches()),
            terminals: vec![terminal; ports as usize],
            net: ControlNetwork::new(banyan, p.electrical_rate, p.signal_bytes, p.alpha_sig),
            p,
            attempts: Slab::new(),
            msgs: Slab::new(),
            timers: Timers::default(),
            control_signals: 0,
            control_delay_sum: 0.0,
            control_delay_max: 0.0,
            blocked_setups: 0,
            optical_msgs: 0,
            optical_bytes: 0.0,
            optical_delay_sum: 0.0,
            packets: 0,
        })
    }

    pub fn ports(&self) -> u32 {
        self.net.banyan().ports()
    }

    pub fn stages(&self) -> u32 {
        self.net.banyan().stages()
    }

    pub fn params(&self) -> &GeminiParams {
        &self.p
    }

    /// Eq. 5: the least idle time between two optical messages of one source.
    pub fn min_idle(&self) -> f64 {
        self.p.t_sig() * (2.0 * (1.0 + self.p.alpha_sig) * f64::from(self.stages()) + 3.0)
    }

    /// Queues an optical message (circuit-switched).
    pub fn send_optical(&mut self, now: Time, token: u32, src: u32, dst: u32, bytes: u64) {
        let m = self.msgs.add(Msg::new(now, token, src, dst, bytes));
        let q = match self.p.protocol {
            Protocol::Basic => 0,
            Protocol::Voq => dst as usize,
        };
        self.terminals[src as usize].queues[q].push_back(m);
        self.start(src, now);
    }

    /// Sends a packet of `bytes` (at least one signal's length) over the electrical network.
    pub fn send_packet(&mut self, now: Time, token: u32, src: u32, dst: u32, bytes: u64) {
        let m = self.msgs.add(Msg::new(now, token, src, dst, bytes));
        self.signal(
            now,
            Sig::Packet,
            src,
            dst,
            m,
            bytes.max(self.p.signal_bytes),
        );
    }

    fn signal(&mut self, now: Time, kind: Sig, from: u32, to: u32, of: u32, bytes: u64) {
        let (s, at) = self.net.send(Signal {
            kind,
            from,
            to,
            of,
            bytes,
            sent: now,
        });
        self.timers.push(at, Ev::Reach(s, 0));
    }

    pub fn next_time(&self) -> Option<Time> {
        self.timers.peek_time()
    }

    pub fn advance(&mut self, now: Time, out: &mut Vec<Done>) {
        while let Some((t, ev)) = self.timers.pop_due(now) {
            match ev {
                Ev::Reach(s, k) if k == self.stages() => self.arrive(t, s, out),
                Ev::Reach(s, k) => self
                    .timers
                    .push(self.net.processed_at(t), Ev::Processed(s, k)),
                Ev::Processed(s, k) => self.processed(t, s, k),
                Ev::TransmitEnd(a) => self.transmit_end(t, a, out),
                Ev::Retry(src) => {
                    self.terminals[src as usize].pausing = false;
                    self.start(src, t);
                }
            }
        }
    }

    /// A switch acts on a signal it processed, then queues it on its output link.
    fn processed(&mut self, t: Time, s: u32, k: u32) {
        let sig = *self.net.signal(s);
        let hop = self.net.hop(s, k);
        match sig.kind {
            Sig::Setup => {
                let a = &mut self.attempts[sig.of];
                if !a.blocked {
                    if self.switches.reserve(&hop, sig.from) {
                        a.granted += 1;
                    } else {
                        a.blocked = true;
                    }
                }
            }
            Sig::Teardown if k < self.attempts[sig.of].granted => self.switches.release(&hop),
            _ => {}
        }
        let at = self.net.forward(s, k, t);
        self.timers.push(at, Ev::Reach(s, k + 1));
    }

    /// A signal reached its destination terminal.
    fn arrive(&mut self, t: Time, s: u32, out: &mut Vec<Done>) {
        let sig = self.net.take(s);
        if sig.kind == Sig::Packet {
            let m = self.msgs[sig.of];
            self.msgs.remove(sig.of);
            self.packets += 1;
            let bare = self.net.min_packet_latency(sig.bytes);
            out.push(Done {
                token: m.token,
                at: t,
                setup_ns: 0.0,
                wait_ns: (t - m.submitted - bare).max(0.0),
                blocked: 0,
                optical: false,
            });
            return;
        }
        let delay = t - sig.sent;
        self.control_signals += 1;
        self.control_delay_sum += delay;
        self.control_delay_max = self.control_delay_max.max(delay);
        let a = sig.of;
        match sig.kind {
            Sig::Setup => {
                // The destination answers at line rate.
                let reply = if self.attempts[a].blocked {
                    Sig::Block
                } else {
                    Sig::Ack
                };
                self.signal(t, reply, sig.to, sig.from, a, self.p.signal_bytes);
            }
            Sig::Ack => self.on_ack(t, sig.to, a),
            Sig::Block => {
                self.blocked_setups += 1;
                self.terminals[sig.to as usize].outstanding -= 1;
                let m = self.attempts[a].msg;
                self.msgs[m].blocked += 1;
                self.teardown(t, sig.to, a);
                self.answered(t, sig.to);
            }
            Sig::Teardown => self.attempts.remove(a),
            Sig::Packet => unreachable!("handled above"),
        }
    }

    fn teardown(&mut self, t: Time, src: u32, a: u32) {
        let dst = self.msgs[self.attempts[a].msg].dst;
        self.signal(t, Sig::Teardown, src, dst, a, self.p.signal_bytes);
    }

    fn on_ack(&mut self, t: Time, src: u32, a: u32) {
        let term = &mut self.terminals[src as usize];
        term.outstanding -= 1;
        if term.transmitting {
            // VOQ: another setup of the burst got through first; this path goes unused.
            self.teardown(t, src, a);
            self.answered(t, src);
            return;
        }
        term.transmitting = true;
        let attempt = self.attempts[a];
        let m = &mut self.msgs[attempt.msg];
        m.setup_ns = t - attempt.sent;
        if self.p.protocol == Protocol::Voq {
            term.next_dst = (m.dst + 1) % self.net.banyan().ports();
        }
        let busy = m.bytes as f64 / self.p.optical_rate;
        term.busy_ns += busy;
        self.timers.push(t + busy, Ev::TransmitEnd(a));
    }

    /// A reply that leaves the source without a circuit: when nothing is outstanding or
    /// on the fibre any more, the source tries again (after the pause).
    fn answered(&mut self, t: Time, src: u32) {
        let term = &mut self.terminals[src as usize];
        if term.outstanding > 0 || term.transmitting {
            return;
        }
        if self.p.retry_pause_ns > 0.0 {
            term.pausing = true;
            self.timers.push(t + self.p.retry_pause_ns, Ev::Retry(src));
        } else {
            self.start(src, t);
        }
    }

    fn transmit_end(&mut self, t: Time, a: u32, out: &mut Vec<Done>) {
        let m = self.attempts[a].msg;
        let msg = self.msgs[m];
        let q = match self.p.protocol {
            Protocol::Basic => 0,
            Protocol::Voq => msg.dst as usize,
        };
        let term = &mut self.terminals[msg.src as usize];
        let head = term.queues[q].pop_front();
        debug_assert_eq!(head, Some(m));
        term.transmitting = false;
        self.msgs.remove(m);
        self.optical_msgs += 1;
        self.optical_bytes += msg.bytes as f64;
        self.optical_delay_sum += t - msg.submitted;
        let busy = msg.bytes as f64 / self.p.optical_rate;
        out.push(Done {
            token: msg.token,
            at: t,
            setup_ns: msg.setup_ns,
            wait_ns: (t - msg.submitted - msg.setup_ns - busy).max(0.0),
            blocked: msg.blocked,
            optical: true,
        });
        self.teardown(t, msg.src, a);
        if self.terminals[msg.src as usize].outstanding == 0 {
            self.start(msg.src, t);
        }
    }

    /// An idle source sends its setup (basic) or setup burst (VOQ).
    fn start(&mut self, src: u32, t: Time) {
        let term = &self.terminals[src as usize];
        if term.transmitting || term.pausing || term.outstanding > 0 {
            return;
        }
        let n = term.queues.len() as u32;
        let first = term.next_dst;
        let heads: Vec<u32> = (0..n)
            .filter_map(|i| term.queues[((first + i) % n) as usize].front().copied())
            .collect();
        for m in heads {
            let a = self.attempts.add(Attempt {
                msg: m,
                granted: 0,
                blocked: false,
                sent: t,
            });
            self.terminals[src as usize].outstanding += 1;
            let dst = self.msgs[m].dst;
            self.signal(t, Sig::Setup, src, dst, a, self.p.signal_bytes);
        }
    }

    /// Named counters at `now`.
    pub fn stats(&self, now: Time, out: &mut Vec<(String, f64)>) {
        let n = f64::from(self.ports());
        let span = now.max(f64::MIN_POSITIVE);
        let mean = |sum: f64, count: u64| if count > 0 { sum / count as f64 } else { 0.0 };
        out.push(("optical_messages".into(), self.optical_msgs as f64));
        out.push(("optical_bytes".into(), self.optical_bytes));
        out.push((
            "optical_delay_mean_ns".into(),
            mean(self.optical_delay_sum, self.optical_msgs),
        ));
        out.push(("electrical_packets".into(), self.packets as f64));
        out.push(("control_signals".into(), self.control_signals as f64));
        out.push((
            "control_delay_mean_ns".into(),
            mean(self.control_delay_sum, self.control_signals),
        ));
        out.push(("control_delay_max_ns".into(), self.control_delay_max));
        out.push(("control_delay_min_ns".into(), self.net.min_latency()));
        out.push(("blocked_setups".into(), self.blocked_setups as f64));
        out.push((
            "blocking_rate_per_s".into(),
            self.blocked_setups as f64 / (span * 1e-9),
        ));
        let busy: f64 = self.terminals.iter().map(|t| t.busy_ns).sum();
        out.push(("optical_utilisation".into(), busy / (n * span)));
        // Eq. 7–9 for the mean optical message delivered.
        let mean_bytes = mean(self.optical_bytes, self.optical_msgs);
        let busy_one = mean_bytes / self.p.optical_rate;
        let eta = if mean_bytes > 0.0 {
            busy_one / (busy_one + self.min_idle())
        } else {
            0.0
        };
        out.push(("utilisation_efficiency_max".into(), eta));
        let tput_max = n * eta * self.p.optical_rate;
        let tput = self.optical_bytes / span;
        out.push((
            "throughput_normalised".into(),
            if tput_max > 0.0 { tput / tput_max } else { 0.0 },
        ));
        out.push(("gamma".into(), mean_bytes / self.p.signal_bytes as f64));
        out.push(("theta".into(), self.p.optical_rate / self.p.electrical_rate));
    }
}
