//! Hybrid mode (`background = "virtual"`): the synthetic background jobs are no packets
//! but, at every output port their mean load crosses, a virtual queue that the traces'
//! packets (the only explicit ones) wait behind and that adaptive routing reads — after
//! Kiddle et al.'s hybrid packet/fluid simulation (PADS 2003: foreground packets, background
//! as load, meeting at the queues).
//!
//! What a port carries. A background message crosses a port as a train: its packets back
//! to back at the link rate (the source sends them so; engine.rs). Trains arrive as a
//! Poisson process whose rate and sizes come from the background's demands routed over the
//! topology, each route carrying what max-min sharing with the demand as its ceiling gives
//! it, so an overloaded link carries its capacity (`PacketNetwork::background_load`). At an
//! output the explicit engine picks
//! uniformly at random among the heads that can go, packet by packet (engine.rs), so the
//! trains present at once share the link equally: processor sharing, whose number of
//! trains present is geometric in the load whatever their sizes (M/G/1-PS). That is the
//! state kept per port: the bytes each present train has left, and its kind (the input
//! queue it waits in at the port's router, its VC there, its destination's ejection link).
//!
//! What a foreground packet meets. When its output is free and m foreground heads can go,
//! with k trains present (at most one per input feeding the port), each packet slot goes to a foreground head with probability
//! m/(m+k): the background sends a geometric number of packets first, after the rest of
//! the one on the wire. While a foreground packet is on the link the trains get no
//! service (`hold`). The arrival rates are the demands', the sharing is the engine's own
//! arbitration rule.
//!
//! Cost. A port's state is advanced lazily (arrivals and departures of its trains) only
//! when a foreground packet or a routing decision reads it, so the work scales with the
//! foreground's packets, not the background's. After a gap longer than `WINDOW_BUSY`
//! mean busy periods the port restarts empty that long before the instant asked: the trains
//! present then are (all but surely) ones that arrived within the window.
//!
//! Head-of-line (`hol_wait`). A foreground packet entering an input queue waits behind
//! the trains that came in over the same link on its VC and are held there because a port
//! further on (the next one, or their destination's ejection link) serves them slower
//! than their source sends: up to a buffer's worth, drained at those trains' rates.
//!
//! What it leaves out: the background takes no credits (its back-pressure reaches two
//! ports, the next and the ejection one, not the whole tree), its routes are those of an
//! idle network, its carried load is max-min's (the explicit mode's FIFO inputs can
//! collapse below it: tree-2x2x4 delivers 0.10 of injection at 0.83 offered), and periodic
//! arrivals count as Poisson at their mean rate. No constant is fitted to the exact mode.

use crate::fabric::Time;
use crate::prng::SplitMix64;

/// A port restarts empty after an unobserved gap of this many mean busy periods
/// (E[S]/(C(1 − ρ)), M/G/1): the chance that a busy period outlasts it is negligible.
const WINDOW_BUSY: f64 = 50.0;

/// Ports are held below this load: a saturated port's queue (max-min fills a bottleneck
/// to exactly its capacity) has no steady state. Capped ports are counted.
const MAX_LOAD: f64 = 0.95;

/// The background's mean traffic across one port: message trains of `bytes`, arriving at
/// `per_ns` trains per ns.
#[derive(Debug, Clone, Copy)]
pub struct TrainFlow {
    pub bytes: f64,
    pub per_ns: f64,
    /// The input its packets wait in at the port's router (a link, or `links + endpoint`
    /// for an injection queue) and their virtual channel there.
    pub from: u32,
    pub vc: u8,
    /// The link into its destination endpoint, and the rate its source sends at (bytes per
    /// ns): a train fills the input queue it waits in when a port further on serves it
    /// slower than its source sends (tree saturation).
    pub eject: u32,
    pub source_rate: f64,
}

/// A train at a port: bytes left, and its kind.
#[derive(Debug, Clone, Copy)]
struct Train {
    left: f64,
    kind: u32,
}

#[derive(Debug, Clone)]
struct Port {
    /// Link rate, bytes per ns.
    rate: f64,
    /// Inputs the background reaches it from: at most that many of its heads compete
    /// for the link at once (trains from one input follow each other through its FIFO; an
    /// overloaded port's excess waits upstream, held there by back-pressure).
    inputs: f64,
    /// Train arrivals per ns (all sizes).
    per_ns: f64,
    /// Train kinds (sizes, inputs), and their cumulative probabilities apart (an arrival
    /// searches these only: dense, fewer cache lines).
    sizes: Vec<TrainFlow>,
    cumulative: Vec<f64>,
    window: Time,
    /// The state below holds at `at`.
    at: Time,
    /// A foreground packet holds the link until then: no background service before.
    held_until: Time,
    next_arrival: Time,
    /// The trains present, and the least bytes any has left (∞: none). Service takes the
    /// same bytes off every train and rounding is monotonic, so the least stays the same
    /// train's: kept as it goes instead of searched for at every step.
    trains: Vec<Train>,
    least: f64,
    /// The instant a foreground packet's wait at this port ended: the arbitration then
    /// goes to the foreground without a new draw.
    granted_at: Time,
    rng: SplitMix64,
}

pub struct VirtualQueues {
    /// Per link (None: no background crosses it).
    ports: Vec<Option<Port>>,
    packet_bytes: f64,
    buffer_bytes: f64,
    /// Trains that arrived at ports while they were followed, ports with background, and
    /// ports whose load was capped.
    pub trains: u64,
    pub loaded_ports: u64,
    pub capped_ports: u64,
    /// Time foreground packets waited behind background packets, ns: for a link, and in
    /// input queues (head-of-line).
    pub wait_ns: f64,
    pub hol_ns: f64,
    /// Link rates, bytes per ns.
    rates: Vec<f64>,
    /// Per link: the ports whose trains wait in its far-end input queue.
    feeds: Vec<Vec<u32>>,
}

impl VirtualQueues {
    /// Virtual queues on links of `rates` (bytes per ns) carrying `flows[link]`; each port
    /// draws its own arrivals (seeded by `seed` and its link), so a port's background does
    /// not depend on the order in which the foreground reads the ports.
    pub fn new(
        rates: &[f64],
        flows: Vec<Vec<TrainFlow>>,
        packet_bytes: u32,
        buffer_bytes: u32,
        seed: u64,
    ) -> Self {
        let (mut loaded_ports, mut capped_ports) = (0, 0);
        let mut feeds = vec![Vec::new(); rates.len()];
        for (link, port) in flows.iter().enumerate() {
            for f in port {
                let from = &mut feeds.get_mut(f.from as usize);
                if let Some(list) = from {
                    if !list.contains(&(link as u32)) {
                        list.push(link as u32);
                    }
                }
            }
        }
        let ports = flows
            .into_iter()
            .zip(rates)
            .enumerate()
            .map(|(link, (flows, &rate))| {
                let mut per_ns: f64 = flows.iter().map(|f| f.per_ns).sum();
                if per_ns <= 0.0 {
                    return None;
                }
                loaded_ports += 1;
                let bytes_per_ns: f64 = flows.iter().map(|f| f.per_ns * f.bytes).sum();
                let mut load = bytes_per_ns / rate;
                if load > MAX_LOAD {
                    capped_ports += 1;
                    per_ns *= MAX_LOAD / load;
                    load = MAX_LOAD;
                }
                let mean_bytes = bytes_per_ns / flows.iter().map(|f| f.per_ns).sum::<f64>();
                let total: f64 = flows.iter().map(|f| f.per_ns).sum();
                let mut sum = 0.0;
                let cumulative = flows
                    .iter()
                    .map(|f| {
                        sum += f.per_ns / total;
                        sum
                    })
                    .collect();
                let mut inputs: Vec<u32> = flows.iter().map(|f| f.from).collect();
                inputs.sort_unstable();
                inputs.dedup();
                let mut rng = SplitMix64::new(seed ^ 0x7A1_0000 ^ (link as u64) << 20);
                let first = exponential(&mut rng) / per_ns;
                Some(Port {
                    rate,
                    inputs: inputs.len() as f64,
                    per_ns,
                    sizes: flows,
                    cumulative,
                    window: WINDOW_BUSY * mean_bytes / rate / (1.0 - load),
                    at: 0.0,
                    held_until: 0.0,
                    next_arrival: first,
                    trains: Vec::new(),
                    least: f64::INFINITY,
                    granted_at: -1.0,
                    rng,
                })
            })
            .collect();
        Self {
            ports,
            packet_bytes: f64::from(packet_bytes),
            buffer_bytes: f64::from(buffer_bytes),
            trains: 0,
            loaded_ports,
            capped_ports,
            wait_ns: 0.0,
            hol_ns: 0.0,
            rates: rates.to_vec(),
            feeds,
        }
    }

    /// How long a foreground packet that reaches the input queue at the far end of `link`
    /// (VC `vc`) at `t` waits behind background packets in it (head-of-line): the trains
    /// that came in over that link and are held at their next port, because it serves them
    /// slower than the link brings them (shared, or slower), have filled the queue with up to
    /// a buffer's worth, which drains at the rate those ports serve them.
    pub fn hol_wait(&mut self, link: u32, vc: u8, t: Time) -> Time {
        let (buffer, rate_in) = (self.buffer_bytes, self.rates[link as usize]);
        let (mut ahead, mut drain) = (0.0, 0.0);
        for i in 0..self.feeds[link as usize].len() {
            let next = self.feeds[link as usize][i];
            let Some(p) = self.advanced(next, t) else {
                continue;
            };
            let share = p.rate / p.trains.len() as f64;
            for i in 0..p.trains.len() {
                // (Re-borrowed per train: the ejection port below is another port.)
                let p = self.ports[next as usize].as_ref().expect("advanced above");
                let (left, f) = (p.trains[i].left, p.sizes[p.trains[i].kind as usize]);
                if f.from != link || f.vc != vc {
                    continue;
                }
                // Its rate at the next port and at its destination's (where it is one
                // more train than that port's own background).
                let mut down = share;
                if f.eject != next {
                    if let Some(e) = self.advanced(f.eject, t) {
                        down = down.min(e.rate / (e.trains.len() + 1) as f64);
                    }
                }
                if down < rate_in.min(f.source_rate) {
                    ahead += left.min(buffer);
                    drain += down;
                }
            }
        }
        if ahead == 0.0 {
            return 0.0;
        }
        let wait = ahead.min(buffer) / drain;
        self.hol_ns += wait;
        wait
    }

    /// Bytes of background the routing sees at `link` at `t`: each train present has (up
    /// to) an input buffer's worth queued for the link, as its packets would in the
    /// explicit mode while they share it.
    pub fn load(&mut self, link: u32, t: Time) -> u64 {
        let buffer = self.buffer_bytes;
        let Some(p) = self.advanced(link, t) else {
            return 0;
        };
        p.trains.iter().map(|b| b.left.min(buffer)).sum::<f64>() as u64
    }

    /// How long the background keeps free output `link` from the `heads` foreground
    /// packets that could go at `t` (0: one of them goes now).
    pub fn wait(&mut self, link: u32, t: Time, heads: usize) -> Time {
        let packet = self.packet_bytes;
        let Some(p) = self.advanced(link, t) else {
            return 0.0;
        };
        if p.granted_at == t || p.trains.is_empty() {
            return 0.0;
        }
        let k = (p.trains.len() as f64).min(p.inputs);
        let go = heads as f64 / (heads as f64 + k);
        // Background packets sent before a foreground head wins a slot (geometric), at
        // most what the trains have left; then the rest of the one on the wire.
        let packets_left: f64 = p.trains.iter().map(|b| (b.left / packet).ceil()).sum();
        let won = ((1.0 - uniform(&mut p.rng)).ln() / (1.0 - go).ln()).floor();
        let wait = (uniform(&mut p.rng) + won.min(packets_left)) * packet / p.rate;
        p.granted_at = t + wait;
        self.wait_ns += wait;
        wait
    }

    /// A foreground packet occupies `link` from `start` to `end`.
    pub fn hold(&mut self, link: u32, start: Time, end: Time) {
        if let Some(p) = self.advanced(link, start) {
            p.held_until = end;
        }
    }

    /// The port of `link` moved to `t`, if it has background.
    fn advanced(&mut self, link: u32, t: Time) -> Option<&mut Port> {
        let p = self.ports[link as usize].as_mut()?;
        if t - p.at > p.window {
            p.trains.clear();
            p.least = f64::INFINITY;
            p.at = t - p.window;
            p.held_until = p.held_until.min(p.at);
            p.next_arrival = p.at + exponential(&mut p.rng) / p.per_ns;
        }
        self.trains += p.advance(t);
        Some(p)
    }
}

impl Port {
    /// Runs arrivals and processor-sharing service from `at` to `t`; returns the trains
    /// that arrived.
    fn advance(&mut self, t: Time) -> u64 {
        let mut arrived = 0;
        while self.at < t {
            // Service resumes once no foreground packet holds the link.
            let from = self.held_until.max(self.at);
            let k = self.trains.len();
            let departure = match k {
                0 => f64::INFINITY,
                _ => from + self.least * k as f64 / self.rate,
            };
            let next = departure.min(self.next_arrival).min(t);
            if k > 0 && next > from {
                let served = (next - from) * self.rate / k as f64;
                for b in &mut self.trains {
                    b.left -= served;
                }
                self.least -= served;
            }
            self.at = next;
            if next == departure {
                // Rounding leaves a few ulps: a train within a millibyte of done is done.
                self.trains.retain(|b| b.left > 1e-3);
                self.least = self
                    .trains
                    .iter()
                    .map(|b| b.left)
                    .fold(f64::INFINITY, f64::min);
            }
            if self.next_arrival <= next {
                let u = uniform(&mut self.rng);
                let kind = self
                    .cumulative
                    .partition_point(|&c| c <= u)
                    .min(self.sizes.len() - 1);
                let left = self.sizes[kind].bytes;
                self.trains.push(Train {
                    left,
                    kind: kind as u32,
                });
                self.least = self.least.min(left);
                arrived += 1;
                self.next_arrival += exponential(&mut self.rng) / self.per_ns;
            }
        }
        arrived
    }
}

/// Uniform in [0, 1).
fn uniform(rng: &mut SplitMix64) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Exponential with mean 1.
fn exponential(rng: &mut SplitMix64) -> f64 {
    -(1.0 - uniform(rng)).ln()
}
