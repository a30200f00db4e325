//! Photonic circuit, packetised-circuit and segment switching over WDM links (seed 002,
//! Segment Switching, §III–V; its simulator phINRFlow is not public).
//!
//! A unit (a whole message in circuit mode, an MTU packet otherwise) reserves one channel on
//! every link of a segment, waits one cycle per hop forward and one back (§V "a simulation
//! cycle per hop, both forward to reserve the segment and backward to establish it"),
//! sends at the channel rate and frees the channels. Circuit and packet modes only accept
//! the whole route; segment mode follows Algorithm 1: reserve forward until a link has no
//! free channel, walk back to the nearest switch with a free buffer entry, keep the segment
//! up to it and release the rest; the packet waits in that buffer and reserves the next
//! segment from there. A unit that gets no segment frees what it took and retries when a
//! channel of the link that stopped it frees (Algorithm 1 line 26, event-driven instead of
//! polling). `reservations_blocked` counts those failed walks: each is one such wake whose
//! retry then stopped again (often at another link of the route: a walk needs several
//! links free at one instant), so it is the model's count, not a polling loop's.
//!
//! Flow-level, as phINRFlow: a reservation walk is resolved at the instant it starts and
//! holds its channels from then on; its cycles delay the data, not the decision. A
//! message's packets are offered one after another (the next once the previous one holds
//! its first segment), so a message's packets and a node's messages share the injection
//! link's channels; each packet is then an independent unit (§IV-B).

use super::circuit_net::{quantiles, At, ChannelNet, HopGraph};
use crate::fabric::timers::Timers;
use crate::fabric::{Delivery, Time, TransferId, TransferInfo};
use held_links::HeldLinks;

mod held_links;

/// How units are formed and how far they reserve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The whole message over one end-to-end circuit.
    Circuit,
    /// MTU packets, an end-to-end circuit per packet.
    Packet,
    /// MTU packets over segments ending in switch buffers (Algorithm 1).
    Segment,
}

/// Timing and sizing of a segment-switched network.
#[derive(Debug, Clone)]
pub struct Params {
    pub mode: Mode,
    pub mtu: u64,
    /// Bytes per ns of one channel.
    pub channel_rate: f64,
    pub cycle_ns: f64,
    /// Buffer entries (MTU packets) per switch; 0 for switches without a buffer.
    pub buffer_entries: Vec<u32>,
}

#[derive(Debug, Clone)]
struct Message {
    id: TransferId,
    dst: u32,
    /// Packets not yet cut, and not yet delivered.
    to_cut: u32,
    packets_left: u32,
    /// Bytes not yet given to a packet.
    unsent: u64,
    info: TransferInfo,
}

/// One cache line (64 bytes, aligned): keeping a segment and ending one each read a unit
/// once, and with many units in flight that read is a cache miss.
#[derive(Debug, Clone, Default)]
#[repr(align(64))]
struct Unit {
    msg: u32,
    dst: u32,
    /// Failed walks before its segments so far, added to the message's count when the unit
    /// is delivered.
    blocked: u32,
    times_buffered: u32,
    /// Hops walked by the reservations of its segments (their setup time, added to the
    /// message's when the unit is delivered, so keeping a segment does not read the message).
    setup_hops: u32,
    /// Where the unit stands, packed (`pack`); at a switch it holds a buffer entry there.
    at: u32,
    /// Where the segment being sent ends, packed (its links are in `SegmentNet::held`).
    end: u32,
    bytes: u64,
    arrived: Time,
    buffer_ns: f64,
    born: Time,
}

/// What a reservation walk reads of its unit, carried by the unit's place in a link's queue
/// (and its wake): a failed retry (most walks) then touches no `Unit` (a cache miss each,
/// with many units in flight). 16 bytes, so that queued waiters stay small.
#[derive(Debug, Clone, Copy, Default)]
struct Walker {
    unit: u32,
    /// Where the unit stands (fixed while it waits), packed.
    at: u32,
    dst: u32,
    /// Failed walks since the unit's last segment (added to `Unit::blocked` with the next).
    blocked: u32,
}

const ENDPOINT: u32 = 1 << 31;

/// An `At` as its index with `ENDPOINT` set for an endpoint (graphs' node indices stay far
/// below 2^31).
fn pack(at: At) -> u32 {
    let (At::Endpoint(i) | At::Switch(i)) = at;
    debug_assert!(i < ENDPOINT, "node index {i} too large to pack");
    match at {
        At::Endpoint(e) => e | ENDPOINT,
        At::Switch(s) => s,
    }
}

fn unpack(at: u32) -> At {
    if at & ENDPOINT != 0 {
        At::Endpoint(at & !ENDPOINT)
    } else {
        At::Switch(at)
    }
}

impl Walker {
    fn at(&self) -> At {
        unpack(self.at)
    }
}

/// A unit's pending instant. 8 bytes, so a timer entry is 24: the heap of `Timers` (one
/// `SegmentDone` per segment being sent) is read at random by each pop.
#[derive(Debug, Clone, Copy)]
enum Event {
    /// The unit tries to reserve from where it stands (its first try there: it just arrived,
    /// so its `Unit` is read while still in cache).
    Try(u32),
    /// A woken unit's retry, due once its last failed walk's reply came back; its walker and
    /// the link that woke it wait in `SegmentNet::parked`.
    Retry(u32),
    SegmentDone(u32),
}

/// A unit waiting for a channel of the link whose lack stopped its walk.
#[derive(Debug, Clone, Copy)]
struct Waiter {
    walker: Walker,
    /// Earliest retry: a failed walk's reply reaches the unit 2·hops cycles after it left.
    ready: Time,
}

/// Counters of a replay (read by `stats`).
#[derive(Debug, Clone, Default)]
struct Counters {
    packets: u64,
    blocked: u64,
    segments: u64,
    /// Packets by times buffered: 0, 1, 2, 3 or more.
    buffered_hist: [u64; 4],
    network_ns: f64,
    buffer_ns: f64,
}

/// The network state: channels, buffers, units in flight and their timers.
pub struct SegmentNet<G: HopGraph> {
    graph: G,
    p: Params,
    channels: ChannelNet<Waiter>,
    buffer_free: Vec<u32>,
    /// Entry-ns occupied per buffer (minus take time plus release time).
    buffer_busy_ns: Vec<f64>,
    messages: Vec<Option<Message>>,
    units: Vec<Unit>,
    /// The links of each unit's segment being sent.
    held: HeldLinks,
    free_units: Vec<u32>,
    timers: Timers<Event>,
    woken: Vec<(u32, Waiter)>,
    /// Per unit (grown with `units`), the link that woke it and its walker, while its
    /// `Retry` is pending.
    parked: Vec<(u32, Walker)>,
    /// The wakes `wake` is serving (scratch).
    batch: Vec<(u32, Waiter)>,
    opts: Vec<(u32, At)>,
    /// The hops a reservation walk could take (scratch).
    walk: Vec<(u32, At)>,
    done: Vec<Delivery>,
    now: Time,
    c: Counters,
}

impl<G: HopGraph> SegmentNet<G> {
    pub fn new(graph: G, channels_per_link: u16, p: Params) -> Self {
        assert_eq!(p.buffer_entries.len(), graph.switches() as usize);
        let links = graph.links() as usize;
        Self {
            channels: ChannelNet::new(vec![channels_per_link; links]),
            buffer_free: p.buffer_entries.clone(),
            buffer_busy_ns: vec![0.0; p.buffer_entries.len()],
            graph,
            p,
            messages: Vec::new(),
            units: Vec::new(),
            held: HeldLinks::default(),
            free_units: Vec::new(),
            timers: Timers::default(),
            woken: Vec::new(),
            parked: Vec::new(),
            batch: Vec::new(),
            opts: Vec::new(),
            walk: Vec::new(),
            done: Vec::new(),
            now: 0.0,
            c: Counters::default(),
        }
    }

    pub fn graph(&self) -> &G {
        &self.graph
    }

    pub fn params(&self) -> &Params {
        &self.p
    }

    /// Starts message `id` of `bytes` from `src` to `dst` (distinct endpoints) at `now`.
    pub fn start(&mut self, now: Time, id: TransferId, src: u32, dst: u32, bytes: u64) {
        self.now = now;
        let packets = match self.p.mode {
            Mode::Circuit => 1,
            _ => bytes.div_ceil(self.p.mtu).max(1) as u32,
        };
        let i = id as usize;
        if self.messages.len() <= i {
            self.messages.resize(i + 1, None);
        }
        debug_assert!(
            self.messages[i].is_none(),
            "transfer {id} already in flight"
        );
        self.messages[i] = Some(Message {
            id,
            dst,
            to_cut: packets,
            packets_left: packets,
            unsent: bytes,
            info: TransferInfo {
                hops: self.graph.hops(src, dst),
                ..TransferInfo::default()
            },
        });
        self.next_packet(now, id, src);
    }

    /// Cuts the message's next packet and tries to send it from `src`.
    fn next_packet(&mut self, now: Time, msg: u32, src: u32) {
        let m = self.messages[msg as usize].as_mut().expect("message");
        if m.to_cut == 0 {
            return;
        }
        m.to_cut -= 1;
        let bytes = match self.p.mode {
            Mode::Circuit => m.unsent,
            _ => m.unsent.min(self.p.mtu),
        };
        m.unsent -= bytes;
        let u = self.free_units.pop().unwrap_or_else(|| {
            self.units.push(Unit::default());
            self.parked.push(Default::default());
            self.units.len() as u32 - 1
        });
        let unit = &mut self.units[u as usize];
        unit.msg = msg;
        unit.dst = m.dst;
        unit.blocked = 0;
        unit.times_buffered = 0;
        unit.setup_hops = 0;
        unit.at = pack(At::Endpoint(src));
        unit.bytes = bytes;
        unit.arrived = now;
        unit.buffer_ns = 0.0;
        unit.born = now;
        self.c.packets += 1;
        self.timers.push(now, Event::Try(u));
    }

    pub fn next_time(&self) -> Option<Time> {
        self.timers.peek_time()
    }

    /// Runs every event up to `now`, appending finished messages to `out`.
    pub fn advance(&mut self, now: Time, out: &mut Vec<Delivery>) {
        while let Some((t, ev)) = self.timers.pop_due(now) {
            self.now = t;
            match ev {
                Event::Try(u) => {
                    let unit = &self.units[u as usize];
                    let walker = Walker {
                        unit: u,
                        at: unit.at,
                        dst: unit.dst,
                        blocked: 0,
                    };
                    self.try_unit(t, walker, None);
                }
                Event::Retry(u) => {
                    let (link, walker) = self.parked[u as usize];
                    self.try_unit(t, walker, Some(link));
                }
                Event::SegmentDone(u) => self.segment_done(t, u),
            }
            // Wakes are served once the instant's events have all run (as their timers used
            // to be), so a retry sees every channel freed at its instant.
            if self.timers.peek_time() != Some(t) {
                self.wake(t);
            }
        }
        self.now = self.now.max(now);
        out.append(&mut self.done);
    }

    /// One run of Algorithm 1 for a unit from where it stands (woken by a channel of link
    /// `woken_from` freeing, or not).
    fn try_unit(&mut self, now: Time, w: Walker, woken_from: Option<u32>) {
        if let Some(l) = woken_from {
            self.channels.woke(l);
        }
        let (at, dst) = (w.at(), w.dst);
        // Forward (Algorithm 1 lines 3-6): hop by hop up to the first link with no free
        // channel; at an adaptive hop, over the alternatives offered. The walk is resolved
        // at one instant and crosses a link once, so it reads the channel counts and takes
        // only the channels of the segment it keeps. The hops are recomputed each walk:
        // cheaper than reading a stored route (a cache miss) for walks that stop early.
        self.walk.clear();
        let channels = &self.channels;
        let free = |l: u32| channels.free(l) > 0;
        let blocked_on = self
            .graph
            .walk_free(at, dst, free, &mut self.opts, &mut self.walk);
        let walked = self.walk.len();
        let hop = |i: usize| self.walk[i];
        let node = |i: usize| if i == 0 { at } else { hop(i - 1).1 };
        let keep = match blocked_on {
            None => Some(walked),
            Some(_) if self.p.mode == Mode::Segment => {
                // Backward (lines 14-20): the nearest switch on the way (not the segment's
                // start) with a free buffer entry ends the segment. On a direct network an
                // endpoint and its switch are one node (seed 002's torus node is its
                // router): the source's and the destination's own switch cannot end a
                // segment (§IV-A: the first segment begins at the source, the last ends at
                // the destination).
                let own = |e: At| match e {
                    At::Endpoint(e) => self.graph.home_switch(e),
                    At::Switch(_) => None,
                };
                let (src_sw, dst_sw) = (own(at), self.graph.home_switch(dst));
                (1..=walked).rev().find(|&i| match node(i) {
                    At::Switch(s) => {
                        self.buffer_free[s as usize] > 0 && Some(s) != src_sw && Some(s) != dst_sw
                    }
                    At::Endpoint(_) => false,
                })
            }
            Some(_) => None,
        };
        let setup = 2.0 * walked as f64 * self.p.cycle_ns;
        let kept = keep.unwrap_or(0);
        let end = node(kept);
        for i in kept..walked {
            self.channels.take_and_give(hop(i).0, now);
        }
        match keep {
            Some(_) => {
                let u = w.unit;
                let held = &self.walk[..kept];
                for &(l, _) in held {
                    self.channels.take(l, now);
                }
                if blocked_on.is_some() {
                    let At::Switch(s) = end else { unreachable!() };
                    self.buffer_free[s as usize] -= 1;
                    self.buffer_busy_ns[s as usize] -= now;
                }
                let unit = &mut self.units[u as usize];
                unit.blocked += w.blocked;
                let send = unit.bytes as f64 / self.p.channel_rate;
                for &(l, _) in held {
                    self.channels.add_data(l, send);
                }
                self.held.set(u, held.iter().map(|h| h.0));
                if let At::Switch(_) = at {
                    unit.buffer_ns += now - unit.arrived;
                }
                unit.end = pack(end);
                unit.setup_hops += walked as u32;
                let msg = unit.msg;
                self.c.segments += 1;
                self.timers.push(now + setup + send, Event::SegmentDone(u));
                if let At::Endpoint(src) = at {
                    self.next_packet(now, msg, src);
                }
            }
            None => {
                let link = blocked_on.expect("blocked");
                self.c.blocked += 1;
                let walker = Walker {
                    blocked: w.blocked + 1,
                    ..w
                };
                let ready = now + setup;
                self.channels.wait(link, Waiter { walker, ready });
            }
        }
        if let Some(l) = woken_from {
            self.channels.pump(l, &mut self.woken);
        }
    }

    /// Retries the units whose link freed a channel: at once if they are ready, else at their
    /// ready time. A retry run at once that fails passes its link's wake to the next waiter
    /// (`pump` pushes it on `woken`), which is popped next: a freed channel walks its FIFO's
    /// ready waiters in one loop, reading them in queue order, instead of one timer each.
    fn wake(&mut self, now: Time) {
        let mut batch = std::mem::take(&mut self.batch);
        std::mem::swap(&mut batch, &mut self.woken);
        for &first in &batch {
            let mut next = Some(first);
            while let Some((link, w)) = next {
                if w.ready > now {
                    let u = w.walker.unit;
                    self.parked[u as usize] = (link, w.walker);
                    self.timers.push(w.ready, Event::Retry(u));
                    break;
                }
                self.try_unit(now, w.walker, Some(link));
                next = self.woken.pop();
            }
        }
        batch.clear();
        self.batch = batch;
    }

    fn segment_done(&mut self, now: Time, u: u32) {
        // The unit is read before its links are given back: its line and its held links'
        // are independent cache misses, so they overlap.
        let unit = &mut self.units[u as usize];
        if let At::Switch(s) = unpack(unit.at) {
            self.buffer_free[s as usize] += 1;
            self.buffer_busy_ns[s as usize] += now;
        }
        for &l in self.held.get(u) {
            self.channels.give(l, now, &mut self.woken);
        }
        unit.at = unit.end;
        let end = unpack(unit.end);
        let msg = unit.msg;
        match end {
            At::Switch(_) => {
                unit.arrived = now;
                unit.times_buffered += 1;
                self.timers.push(now, Event::Try(u));
            }
            At::Endpoint(_) => {
                self.c.buffered_hist[(unit.times_buffered as usize).min(3)] += 1;
                self.c.buffer_ns += unit.buffer_ns;
                self.c.network_ns += now - unit.born - unit.buffer_ns;
                let m = self.messages[msg as usize].as_mut().expect("message");
                m.info.wait_ns += unit.buffer_ns;
                m.info.setup_ns += 2.0 * f64::from(unit.setup_hops) * self.p.cycle_ns;
                m.info.blocked += unit.blocked;
                if unit.times_buffered > 0 {
                    m.info.path = 1;
                }
                m.packets_left -= 1;
                if m.packets_left == 0 {
                    let m = self.messages[msg as usize].take().expect("message");
                    self.done.push(Delivery {
                        id: m.id,
                        at: now,
                        info: m.info,
                    });
                }
                self.free_units.push(u);
            }
        }
    }

    /// Whether nothing is in flight and every channel and buffer entry is free again.
    pub fn is_drained(&self) -> bool {
        self.timers.is_empty()
            && self.channels.held() == 0
            && self.channels.waiting() == 0
            && self.buffer_free == self.p.buffer_entries
            && self.messages.iter().all(Option::is_none)
    }

    /// Named counters over [0, now]: utilisation of inter-switch links, buffers, latency.
    pub fn stats(&self, now: Time, out: &mut Vec<(String, f64)>) {
        let c = &self.c;
        let delivered: u64 = c.buffered_hist.iter().sum();
        out.push(("packets".into(), c.packets as f64));
        // Zero once a replay drained: nothing lost, nothing left holding a resource.
        out.push(("channels_held".into(), self.channels.held() as f64));
        let entries: u32 = self.p.buffer_entries.iter().sum();
        let free: u32 = self.buffer_free.iter().sum();
        out.push(("buffer_entries_held".into(), f64::from(entries - free)));
        out.push(("segments".into(), c.segments as f64));
        // Failed Algorithm-1 walks (a unit's first try, or its retry once woken).
        out.push(("reservations_blocked".into(), c.blocked as f64));
        for (i, n) in c.buffered_hist.iter().enumerate() {
            let name = if i == 3 {
                "3plus".to_string()
            } else {
                i.to_string()
            };
            out.push((format!("packets_buffered_{name}"), *n as f64));
        }
        if delivered > 0 {
            out.push((
                "packet_network_ns_mean".into(),
                c.network_ns / delivered as f64,
            ));
            out.push((
                "packet_buffer_ns_mean".into(),
                c.buffer_ns / delivered as f64,
            ));
        }
        if now <= 0.0 {
            return;
        }
        let (mut data, mut reserved) = (Vec::new(), Vec::new());
        for l in 0..self.graph.links() {
            if !self.graph.is_endpoint_link(l) {
                let (d, r) = self.channels.utilisation(l, now);
                data.push(d);
                reserved.push(r);
            }
        }
        push_spread(out, "link_utilisation", &mut data);
        push_spread(out, "link_reserved", &mut reserved);
        let mut buffers: Vec<f64> = (0..self.buffer_free.len())
            .filter(|&s| self.p.buffer_entries[s] > 0)
            .map(|s| {
                let cap = f64::from(self.p.buffer_entries[s]);
                let open = f64::from(self.p.buffer_entries[s] - self.buffer_free[s]) * now;
                (self.buffer_busy_ns[s] + open) / (cap * now)
            })
            .collect();
        out.push(("buffers".into(), buffers.len() as f64));
        push_spread(out, "buffer_utilisation", &mut buffers);
    }
}

/// Mean, max and deciles (the sorted curves of seed 002 Figs. 4–6) of per-item values.
fn push_spread(out: &mut Vec<(String, f64)>, name: &str, values: &mut [f64]) {
    if values.is_empty() {
        return;
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    out.push((format!("{name}_mean"), mean));
    for (i, q) in quantiles(values, 10).into_iter().enumerate() {
        out.push((format!("{name}_q{}", i * 10), q));
    }
}

#[cfg(test)]
mod tests;
