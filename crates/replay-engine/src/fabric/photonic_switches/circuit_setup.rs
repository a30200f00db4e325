//! Photonic circuits through a multi-stage switch chip, set up over a low-speed electrical
//! mirror network (seed 004, "Multi-Layer Silicon Nanophotonic Network Chips", §I and
//! §IV-B). A sending NIC's *SETUP* reserves the chip's links stage by stage; at the
//! destination it turns into a *PATH-ACK* back to the source once the receiver is ready (a
//! SETUP carrying an RTS waits there for the receiver's CTS, which the PATH-ACK carries
//! back), and the source then sends the data on the circuit; a *TEARDOWN* after the data
//! frees the links. A SETUP that finds a link
//! taken waits at that switch holding what it reserved. Path-timeout protocol (§IV-B): if
//! no PATH-ACK reached the source `timeout_ns` after its SETUP left, the source tears the
//! partial path down and sends a new SETUP after an incremental randomized backoff
//! (uniform in [0, k · backoff_ns) after the k-th timeout).
//!
//! The chip is a unidirectional k-ary butterfly (seed 004 §III-C, Fig. 6; its 1000-port
//! design is 4-ary with 5 stages): one path per pair, and every link (the two endpoint
//! ports included) carries one circuit of all wavelengths at a time. The setup network is
//! contention-free: every hop costs `hop_ns` (link latency + crossbar + arbitration +
//! serialization of the SETUP, Table IV).

use super::butterfly::Butterfly;
use crate::fabric::photonic_networks::circuit_net::ChannelNet;
use crate::fabric::timers::Timers;
use crate::fabric::{Delivery, Time, TransferId, TransferInfo};
use crate::prng::SplitMix64;

/// Path class of circuit transfers in the hybrid model (0 is the packet network).
pub const PATH_CIRCUIT: u8 = 1;

/// Timing of the setup protocol and of the circuits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SetupParams {
    /// One hop of a SETUP, PATH-ACK or control message on the setup network, ns.
    pub hop_ns: f64,
    /// Path timeout: a SETUP not acknowledged this long after it left is torn down, ns.
    pub timeout_ns: f64,
    /// Backoff unit: the wait after the k-th timeout is uniform in [0, k · backoff_ns).
    pub backoff_ns: f64,
    /// Circuit rate (wavelengths × per-wavelength rate), bytes/ns.
    pub rate: f64,
    /// Propagation delay of the circuit, ns.
    pub propagation_ns: f64,
}

#[derive(Debug, Clone, Copy)]
struct Circuit {
    src: u32,
    dst: u32,
    /// Attempt number, unique over the chip's life: timers and queued wake-ups of older
    /// attempts (of this transfer or of an earlier one with the same id) are stale.
    attempt: u32,
    /// Links 0..held of the path are reserved.
    held: u32,
    first_sent: Time,
    sent: Time,
    /// When the PATH-ACK reaches the source (Some once an attempt made it in time).
    acked: Option<Time>,
    /// Deliver the RTS this SETUP carries when it first reaches the destination, and the
    /// CTS as the PATH-ACK.
    carries_rts: bool,
    rts_delivered: bool,
    /// The receiver answered (CTS submitted; always for data without RTS): a SETUP at the
    /// destination turns into a PATH-ACK.
    receiver_ready: bool,
    /// The current attempt's SETUP holds the whole path and waits at the destination.
    at_dst: bool,
    /// Data waiting for the PATH-ACK (a transfer with no RTS before it), bytes.
    data: Option<u64>,
    timeouts: u32,
    /// When the SETUP started waiting for a taken link, and the total of such waits plus
    /// the backoffs, ns.
    blocked_since: Time,
    queued: bool,
    waited: f64,
}

#[derive(Debug, Clone, Copy)]
enum Ev {
    /// The SETUP asks for link `level` (level = path_links: it reached the destination).
    Take(u32),
    Deadline,
    Retry,
    DataStart,
    /// The data's last byte arrived: deliver, TEARDOWN frees the links.
    Finish,
}

/// Counters of the setup protocol (fabric stats).
#[derive(Debug, Clone, Copy, Default)]
pub struct SetupStats {
    pub setups: u64,
    pub timeouts: u64,
    /// Timeouts of SETUPs that held the whole path but whose receiver had not answered.
    pub timeouts_at_destination: u64,
    pub circuits: u64,
    pub setup_ns_total: f64,
    pub setup_ns_max: f64,
    pub bytes: f64,
}

pub struct CircuitChip {
    chip: Butterfly,
    p: SetupParams,
    links: ChannelNet<(TransferId, u32)>,
    circuits: Vec<Option<Circuit>>,
    timers: Timers<(TransferId, u32, Ev)>,
    rng: SplitMix64,
    woken: Vec<(u32, (TransferId, u32))>,
    ready: Vec<Delivery>,
    attempts: u32,
    pub stats: SetupStats,
}

impl CircuitChip {
    pub fn new(chip: Butterfly, p: SetupParams, seed: u64) -> Self {
        Self {
            chip,
            p,
            links: ChannelNet::new(vec![1; chip.links() as usize]),
            circuits: Vec::new(),
            timers: Timers::default(),
            rng: SplitMix64::new(seed),
            woken: Vec::new(),
            ready: Vec::new(),
            attempts: 0,
            stats: SetupStats::default(),
        }
    }

    pub fn chip(&self) -> &Butterfly {
        &self.chip
    }

    /// One-way latency of a control message over the setup network.
    pub fn one_way_ns(&self) -> f64 {
        f64::from(self.chip.path_links()) * self.p.hop_ns
    }

    /// Whether transfer `id` holds an acknowledged circuit.
    pub fn has_circuit(&self, id: TransferId) -> bool {
        matches!(self.circuits.get(id as usize), Some(Some(c)) if c.acked.is_some())
    }

    /// Sends a SETUP for transfer `id` at `now`. With `carries_rts` the RTS is delivered
    /// when the SETUP reaches the destination; with `data` those bytes follow the PATH-ACK.
    pub fn setup(
        &mut self,
        now: Time,
        id: TransferId,
        src: u32,
        dst: u32,
        carries_rts: bool,
        data: Option<u64>,
    ) {
        let i = id as usize;
        if self.circuits.len() <= i {
            self.circuits.resize(i + 1, None);
        }
        debug_assert!(
            self.circuits[i].is_none(),
            "transfer {id} already has a circuit"
        );
        self.circuits[i] = Some(Circuit {
            src,
            dst,
            attempt: 0,
            held: 0,
            first_sent: now,
            sent: now,
            acked: None,
            carries_rts,
            rts_delivered: false,
            receiver_ready: !carries_rts,
            at_dst: false,
            data,
            timeouts: 0,
            blocked_since: now,
            queued: false,
            waited: 0.0,
        });
        self.send_setup(now, id);
    }

    /// The data of `id` leaves on its acknowledged circuit at `now` (or at the PATH-ACK).
    pub fn send_data(&mut self, now: Time, id: TransferId, bytes: u64) {
        let c = self.circuits[id as usize].as_mut().expect("circuit");
        let start = now.max(c.acked.expect("acknowledged circuit"));
        self.start_data(start, id, bytes);
    }

    fn send_setup(&mut self, now: Time, id: TransferId) {
        let c = self.circuits[id as usize].as_mut().expect("circuit");
        self.attempts += 1;
        c.attempt = self.attempts;
        c.sent = now;
        self.stats.setups += 1;
        let attempt = c.attempt;
        self.timers
            .push(now + self.p.timeout_ns, (id, attempt, Ev::Deadline));
        self.take(now, id, 0);
    }

    /// The SETUP of `id` asks for link `level` at `now`.
    fn take(&mut self, now: Time, id: TransferId, level: u32) {
        let n = self.chip.path_links();
        let c = self.circuits[id as usize].as_mut().expect("circuit");
        if level == n {
            // At the destination: the first SETUP to arrive hands the receiver its RTS;
            // once the receiver has answered, the SETUP turns into the PATH-ACK.
            c.at_dst = true;
            if c.carries_rts && !c.rts_delivered {
                c.rts_delivered = true;
                self.ready.push(Delivery {
                    id,
                    at: now,
                    info: TransferInfo::default(),
                });
            }
            if c.receiver_ready {
                self.acknowledge(now + self.one_way_ns(), id);
            }
            return;
        }
        let link = self.chip.link(c.src, c.dst, level);
        if self.links.free(link) > 0 {
            self.links.take(link, now);
            c.held = level + 1;
            let next = now + self.p.hop_ns;
            self.timers.push(next, (id, c.attempt, Ev::Take(level + 1)));
        } else {
            c.blocked_since = now;
            c.queued = true;
            self.links.wait(link, (id, c.attempt));
        }
    }

    /// The receiver of `id` answers the RTS (its CTS) at `now`: the PATH-ACK leaves now if
    /// the SETUP waits at the destination, else when a later attempt arrives there.
    pub fn receiver_ready(&mut self, now: Time, id: TransferId) {
        let c = self.circuits[id as usize].as_mut().expect("circuit");
        c.receiver_ready = true;
        if c.at_dst && c.acked.is_none() {
            self.acknowledge(now + self.one_way_ns(), id);
        }
    }

    /// The PATH-ACK of `id`'s current attempt reaches the source at `ack`: in time, the
    /// circuit is up (the CTS arrives with it, waiting data leaves); too late, the deadline
    /// tears the attempt down.
    fn acknowledge(&mut self, ack: Time, id: TransferId) {
        let c = self.circuits[id as usize].as_mut().expect("circuit");
        if ack > c.sent + self.p.timeout_ns {
            return;
        }
        c.acked = Some(ack);
        let setup = ack - c.first_sent;
        self.stats.circuits += 1;
        self.stats.setup_ns_total += setup;
        self.stats.setup_ns_max = self.stats.setup_ns_max.max(setup);
        if c.carries_rts {
            self.ready.push(Delivery {
                id,
                at: ack,
                info: TransferInfo::default(),
            });
        }
        if c.data.is_some() {
            self.timers.push(ack, (id, c.attempt, Ev::DataStart));
        }
    }

    fn start_data(&mut self, start: Time, id: TransferId, bytes: u64) {
        let c = self.circuits[id as usize].as_ref().expect("circuit");
        let send = bytes as f64 / self.p.rate;
        for level in 0..self.chip.path_links() {
            self.links
                .add_data(self.chip.link(c.src, c.dst, level), send);
        }
        self.stats.bytes += bytes as f64;
        let at = start + send + self.p.propagation_ns;
        self.timers.push(at, (id, c.attempt, Ev::Finish));
    }

    /// Frees links 0..held of `id` at `now` and serves the SETUPs waiting for them.
    fn release(&mut self, now: Time, id: TransferId) {
        let c = self.circuits[id as usize].as_mut().expect("circuit");
        let (src, dst, held) = (c.src, c.dst, c.held);
        c.held = 0;
        let mut woken = std::mem::take(&mut self.woken);
        for level in 0..held {
            self.links
                .give(self.chip.link(src, dst, level), now, &mut woken);
        }
        while let Some((link, (wid, attempt))) = woken.pop() {
            self.links.woke(link);
            match self.circuits.get_mut(wid as usize) {
                Some(Some(w)) if w.attempt == attempt && w.acked.is_none() => {
                    w.waited += now - w.blocked_since;
                    w.queued = false;
                    let level = link / self.chip.ports();
                    self.links.take(link, now);
                    w.held = level + 1;
                    let next = now + self.p.hop_ns;
                    self.timers.push(next, (wid, attempt, Ev::Take(level + 1)));
                }
                // A timed-out SETUP's wake passes to the next waiter.
                _ => self.links.pump(link, &mut woken),
            }
        }
        self.woken = woken;
    }

    pub fn next_time(&self) -> Option<Time> {
        let ready = self.ready.iter().map(|d| d.at).reduce(f64::min);
        match (self.timers.peek_time(), ready) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Runs the protocol up to `now`, appending what was delivered.
    pub fn advance(&mut self, now: Time, delivered: &mut Vec<Delivery>) {
        while let Some((t, (id, attempt, ev))) = self.timers.pop_due(now) {
            let Some(Some(c)) = self.circuits.get_mut(id as usize) else {
                continue;
            };
            if c.attempt != attempt {
                continue; // a timer of a torn-down attempt
            }
            match ev {
                Ev::Take(level) => self.take(t, id, level),
                Ev::Deadline => {
                    if c.acked.is_some() {
                        continue;
                    }
                    // TEARDOWN of the partial path, then a new SETUP after the backoff.
                    if c.queued {
                        c.waited += t - c.blocked_since;
                        c.queued = false;
                    }
                    if c.at_dst {
                        // The path was up; the receiver had not answered yet.
                        self.stats.timeouts_at_destination += 1;
                        c.at_dst = false;
                    }
                    c.timeouts += 1;
                    self.stats.timeouts += 1;
                    let k = f64::from(c.timeouts);
                    let u = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                    let backoff = u * k * self.p.backoff_ns;
                    c.waited += backoff;
                    // A fresh number makes the torn-down attempt's SETUP (in flight or
                    // queued at a switch) stale.
                    self.attempts += 1;
                    c.attempt = self.attempts;
                    let retry = (id, c.attempt, Ev::Retry);
                    self.release(t, id);
                    self.timers.push(t + backoff, retry);
                }
                Ev::Retry => self.send_setup(t, id),
                Ev::DataStart => {
                    let bytes = c.data.take().expect("waiting data");
                    self.start_data(t, id, bytes);
                }
                Ev::Finish => {
                    let info = TransferInfo {
                        setup_ns: c.acked.expect("acknowledged") - c.first_sent,
                        wait_ns: c.waited,
                        blocked: c.timeouts,
                        hops: self.chip.path_links(),
                        path: PATH_CIRCUIT,
                    };
                    self.release(t, id);
                    self.circuits[id as usize] = None;
                    self.ready.push(Delivery { id, at: t, info });
                }
            }
        }
        let mut i = 0;
        while i < self.ready.len() {
            if self.ready[i].at <= now {
                delivered.push(self.ready.swap_remove(i));
            } else {
                i += 1;
            }
        }
    }

    /// Links held and SETUPs in progress (both 0 once every circuit was torn down).
    pub fn held_links(&self) -> u64 {
        self.links.held()
    }

    pub fn open_circuits(&self) -> usize {
        self.circuits.iter().filter(|c| c.is_some()).count()
    }

    /// Mean share of time the chip's inter-stage links carried data over [0, now].
    pub fn link_utilisation(&self, now: Time) -> f64 {
        let ports = self.chip.ports();
        let inner = (ports..self.chip.stages() * ports).collect::<Vec<_>>();
        if inner.is_empty() {
            return 0.0;
        }
        inner
            .iter()
            .map(|&l| self.links.utilisation(l, now).0)
            .sum::<f64>()
            / inner.len() as f64
    }
}
