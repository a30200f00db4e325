//! The event loop of the packet engine and its `Fabric` face: messages are cut into
//! packets queued at their source's injection queue, one packet per message at a time
//! (round robin between an endpoint's messages); each packet is routed when it reaches the
//! head of that queue (on the links' load at that instant), then moves hop by hop through
//! the ports (network.rs).
//!
//! At one instant every state change (a port freeing, a credit arriving, a head becoming
//! ready) is applied before any output arbitrates, and an output picks uniformly at random
//! among the heads that can go (free read port, a credit for the whole packet) — the
//! random selection of Karol, Hluchyj & Morgan (IEEE Trans. Commun. 35(12), 1987), whose
//! saturation throughputs of FIFO input queueing the tests reproduce.
//!
//! Timing per hop: serialisation `bytes / rate` on the link, its cable latency, then the
//! router delay at the far end. Cut-through forwards the head as it arrives, the next link
//! sending no faster than the tail comes in; store-and-forward waits for the tail.
//! So a packet alone crosses a route in Σ latency + (hops − 1)·router delay + its slowest
//! serialisation (cut-through) or every serialisation (store-and-forward) — the flow
//! model's zero-load times.
//!
//! A link behind a token bucket (shaper.rs) serialises at its peak and sends only while
//! its tokens are ≥ 0; zero-load times take the peak, so a shaper's holds count as waiting.

use super::background_trains::trains;
use super::network::{Ports, Waiter, NONE};
use super::packets::{Message, Packet, Packets};
use super::params::{BackgroundMode, PacketParams, Switching, CREDIT_BYTES};
use super::shaper::Shaper;
use super::stats::Stats;
use super::topology::{spread_classes, Hop, PacketTopology};
use super::virtual_queues::VirtualQueues;
use crate::fabric::schema::ConfigError;
use crate::fabric::slab::Slab;
use crate::fabric::timers::Timers;
use crate::fabric::{Delivery, Demand, Fabric, Locality, Submitted, Time, Transfer, TransferInfo};
use crate::prng::SplitMix64;
use std::cell::RefCell;

/// A state change at an instant (arbitrations come after all of an instant's changes).
#[derive(Debug, Clone, Copy)]
enum Event {
    /// The head of input queue (input × vcs + vc) may be ready to ask for its next link.
    Head(u32),
    /// A link finished serialising a packet (link), and so the input it came from its
    /// read port (the input of `queue`, the input queue it left).
    Sent { link: u32, queue: u32 },
    /// Bytes of credit for (link × vcs + vc) reach the link's sender.
    Credit(u32, u32),
    /// A packet's tail reached its destination endpoint.
    Deliver(u32),
    /// The background packets a link sends before a foreground one are through (hybrid
    /// mode): the link arbitrates again.
    Background(u32),
    /// A shaped link's tokens are back at 0 (shaper.rs): it arbitrates again.
    Tokens(u32),
}

pub struct PacketNetwork<T: PacketTopology> {
    topology: T,
    params: PacketParams,
    /// VCs per deadlock-freedom class: extra VCs split a class by destination.
    spread: u32,
    router_delay: f64,
    link_class: Vec<u8>,
    ports: Ports,
    packets: Packets,
    messages: Slab<Message>,
    events: Timers<Event>,
    /// Outputs to arbitrate at the current instant, in request order (arbitration is
    /// only ever requested for the instant being served).
    arbitrations: Vec<u32>,
    /// The batch of `arbitrations` being served.
    due: Vec<u32>,
    rng: SplitMix64,
    stats: Stats,
    /// Packets delivered per path class.
    routed: Vec<u64>,
    /// `topology.reroutes()`, asked once.
    reroutes: bool,
    /// Scratch: indices into an output's waiters that may go now; a route's links and
    /// hops.
    eligible: Vec<usize>,
    links: Vec<u32>,
    hops: Vec<Hop>,
    now: Time,
    seed: u64,
    /// Hybrid mode: the background's virtual queues (`background_load`), read by the
    /// routing closures, hence a cell.
    background: Option<RefCell<VirtualQueues>>,
}

impl<T: PacketTopology> PacketNetwork<T> {
    pub fn new(topology: T, params: PacketParams, seed: u64) -> Result<Self, ConfigError> {
        let classes = topology.vc_classes();
        if params.virtual_channels < classes {
            return Err(ConfigError {
                key: "packet.virtual_channels".into(),
                message: format!(
                    "this topology's deadlock-free routing needs at least {classes}, got {}",
                    params.virtual_channels
                ),
            });
        }
        let lc = topology.link_classes();
        let link_class = lc.of_link.clone();
        let (shapers, rate) = Shaper::of_links(lc);
        if !shapers.is_empty() && params.background == BackgroundMode::Virtual {
            return Err(ConfigError {
                key: "packet.background".into(),
                message: "\"virtual\" with token-bucket links: the virtual queues do not charge the buckets; use \"explicit\"".into(),
            });
        }
        let latency: Vec<f64> = (0..rate.len() as u32)
            .map(|l| topology.link_latency(l))
            .collect();
        let credit_delay = rate
            .iter()
            .zip(&latency)
            .map(|(r, l)| params.credit_delay_ns.unwrap_or(CREDIT_BYTES / r + l))
            .collect();
        let vcs = usize::from(params.virtual_channels);
        let max_hops = topology.max_hops();
        if max_hops > 1024 {
            return Err(ConfigError {
                key: "topology".into(),
                message: format!(
                    "routes of up to {max_hops} links: the packet engine takes at most 1024"
                ),
            });
        }
        let mut ports = Ports::new(
            rate,
            latency,
            credit_delay,
            topology.endpoints() as usize,
            vcs,
            params.buffer_bytes,
        );
        ports.shapers = shapers;
        Ok(Self {
            spread: u32::from(params.virtual_channels / classes),
            router_delay: topology.router_delay(),
            stats: Stats::new(lc.names.len()),
            routed: vec![0; topology.path_classes().len()],
            reroutes: topology.reroutes(),
            topology,
            params,
            link_class,
            ports,
            packets: Packets::new(max_hops),
            messages: Slab::new(),
            events: Timers::default(),
            arbitrations: Vec::new(),
            due: Vec::new(),
            rng: SplitMix64::new(seed ^ 0x9ac4e7),
            eligible: Vec::new(),
            links: Vec::new(),
            hops: Vec::new(),
            now: 0.0,
            seed,
            background: None,
        })
    }

    /// Time a message of `bytes` takes on `route` alone (see the module comment).
    fn zero_load(&self, route: &[Hop], bytes: u64) -> Time {
        let (mut fixed, mut sum, mut slowest) = (0.0, 0.0, 0.0f64);
        for h in route {
            let l = h.link as usize;
            fixed += self.ports.out[l].latency;
            let s = 1.0 / self.ports.out[l].rate;
            sum += s;
            slowest = slowest.max(s);
        }
        fixed += (route.len() - 1) as f64 * self.router_delay;
        let first = bytes.min(u64::from(self.params.packet_bytes)) as f64;
        match self.params.switching {
            Switching::CutThrough => fixed + bytes as f64 * slowest,
            Switching::StoreAndForward => fixed + first * (sum - slowest) + bytes as f64 * slowest,
        }
    }

    /// Queues the next packet of message `m` at endpoint `src`'s injection queue, ready at
    /// `t`. The queue holds one packet per message: the next is queued, behind the other
    /// messages' packets, when one leaves, so an endpoint sends its messages' packets
    /// round robin (as an InfiniBand adapter serves its send queues), not one message after
    /// another.
    fn inject_next(&mut self, src: u32, m: u32, t: Time) {
        let size = u64::from(self.params.packet_bytes);
        let msg = &mut self.messages[m];
        let k = u64::from(msg.packets_queued);
        msg.packets_queued += 1;
        let bytes = (msg.bytes - k * size).min(size) as u32;
        let p = self.packets.add(m, msg.endpoints, bytes, t);
        let q = self.ports.injection(src) * self.ports.vcs;
        if self.enqueue(q, p) {
            self.events.push(t, Event::Head(q as u32));
        }
    }

    /// Appends packet `p` to input queue `q`; true if the queue was empty.
    fn enqueue(&mut self, q: usize, p: u32) -> bool {
        self.packets.rec[p as usize].next = NONE;
        let last = self.ports.queue[q].last;
        self.ports.queue[q].last = p;
        if last == NONE {
            self.ports.queue[q].first = p;
            true
        } else {
            self.packets.rec[last as usize].next = p;
            false
        }
    }

    /// Removes and returns the head of input queue `q` (not empty).
    fn dequeue(&mut self, q: usize) -> u32 {
        let p = self.ports.queue[q].first;
        debug_assert_ne!(p, NONE, "dequeue from an empty queue");
        let behind = self.packets.rec[p as usize].next;
        self.ports.queue[q].first = behind;
        if behind == NONE {
            self.ports.queue[q].last = NONE;
        }
        p
    }

    fn request_arbitration(&mut self, link: u32, t: Time) {
        debug_assert_eq!(t, self.now);
        let l = link as usize;
        if self.ports.out[l].arbitration_at != t {
            self.ports.out[l].arbitration_at = t;
            self.arbitrations.push(link);
        }
    }

    /// Routes a packet at the head of its injection queue (on the links' load now).
    fn route(&mut self, p: u32) {
        let Packet {
            msg: m,
            endpoints: (src, dst),
            ..
        } = self.packets.rec[p as usize];
        let now = self.now;
        let Self {
            topology,
            ports,
            rng,
            links,
            hops,
            background,
            ..
        } = self;
        let load = |l: u32| ports.out[l as usize].load + virtual_load(background, l, now);
        let path = topology.packet_route(src, dst, &load, rng, links);
        topology.hop_classes(links, hops);
        spread_classes(hops, self.spread, dst);
        self.packets.set_route(p, &self.hops);
        let r = &mut self.packets.rec[p as usize];
        r.path = path;
        self.ports.out[self.hops[0].link as usize].load += u64::from(r.bytes);
        let msg = &mut self.messages[m];
        msg.path = msg.path.max(path);
        msg.hops = self.hops.len() as u32;
        if msg.zero_load_at < 0.0 {
            let (bytes, since) = (msg.bytes, msg.submitted);
            let zero = self.zero_load(&self.hops, bytes);
            self.messages[m].zero_load_at = since + zero;
        }
    }

    /// Lets a progressive adaptive routing decide the rest of a packet's route again at
    /// the router it reached (its load moves to the new next link).
    fn reroute(&mut self, p: u32) {
        let r = self.packets.rec[p as usize];
        let (src, dst) = r.endpoints;
        let taken = usize::from(r.hop);
        self.links.clear();
        self.links
            .extend(self.packets.route(p).iter().map(|h| h.link));
        // Scored without itself: it is not queued anywhere while its router decides.
        let (before, bytes) = (self.links[taken], u64::from(r.bytes));
        self.ports.out[before as usize].load -= bytes;
        let now = self.now;
        let Self {
            topology,
            ports,
            rng,
            links,
            hops,
            background,
            ..
        } = self;
        let load = |l: u32| ports.out[l as usize].load + virtual_load(background, l, now);
        let Some(path) = topology.reroute(src, dst, links, taken, &load, rng) else {
            self.ports.out[before as usize].load += bytes;
            return;
        };
        topology.hop_classes(links, hops);
        spread_classes(hops, self.spread, dst);
        self.packets.set_route(p, &self.hops);
        self.packets.rec[p as usize].path = path;
        self.ports.out[self.hops[taken].link as usize].load += bytes;
        let msg = &mut self.messages[r.msg];
        msg.path = msg.path.max(path);
        msg.hops = self.hops.len() as u32;
    }

    /// The head of input queue `q` asks for its next link if it is ready at `t`; if not,
    /// and `due` (no `Head` event for it is pending), one is scheduled for when it is.
    fn head(&mut self, q: u32, t: Time, due: bool) {
        let qi = q as usize;
        if self.ports.queue[qi].wants != NONE {
            return;
        }
        let Some(p) = self.ports.head(qi) else {
            return;
        };
        let ready = self.packets.rec[p as usize].ready;
        if ready > t {
            if due {
                self.events.push(ready, Event::Head(q));
            }
            return;
        }
        if self.packets.rec[p as usize].hops == 0 {
            self.route(p);
        } else if self.reroutes {
            self.reroute(p);
        }
        let hop = self.packets.next_hop(p);
        let credit = if self.packets.last_hop(p) {
            NONE
        } else {
            (hop.link as usize * self.ports.vcs) as u32 + u32::from(hop.class)
        };
        self.ports.out[hop.link as usize].waiters.push(Waiter {
            queue: q,
            packet: p,
            bytes: self.packets.rec[p as usize].bytes,
            credit,
        });
        self.ports.queue[qi].wants = hop.link;
        self.request_arbitration(hop.link, t);
    }

    /// The read port of the input of queue `sent` is free at `t` (a packet of `sent` left
    /// it): its queues' heads may ask for their links. Only `sent`'s head is new; a head of
    /// another queue that is not ready yet has its `Head` event pending since it became
    /// the head.
    fn input_free(&mut self, sent: u32, t: Time) {
        let vcs = self.ports.vcs as u32;
        let input = sent / vcs;
        for q in input * vcs..(input + 1) * vcs {
            let qi = q as usize;
            let link = self.ports.queue[qi].wants;
            if link != NONE {
                self.request_arbitration(link, t);
            } else {
                self.head(q, t, q == sent);
            }
        }
    }

    /// Output `link` picks one of the heads waiting for it that can go now.
    fn arbitrate(&mut self, link: u32, t: Time) {
        let l = link as usize;
        self.ports.out[l].arbitration_at = -1.0;
        if self.ports.out[l].busy_until > t || self.ports.shaped_shut(l, t) {
            return;
        }
        let vcs = self.ports.vcs;
        self.eligible.clear();
        for (k, w) in self.ports.out[l].waiters.iter().enumerate() {
            if self.ports.in_busy[w.queue as usize / vcs] > t {
                continue;
            }
            if w.credit != NONE && self.ports.credits[w.credit as usize] < w.bytes {
                let r = &mut self.packets.rec[w.packet as usize];
                if r.stalled < 0.0 {
                    r.stalled = t;
                    self.stats.credit_stalls += 1;
                    self.messages[r.msg].credit_stalls += 1;
                }
                continue;
            }
            self.eligible.push(k);
        }
        if self.eligible.is_empty() {
            return;
        }
        if let Some(v) = &self.background {
            let wait = v.borrow_mut().wait(link, t, self.eligible.len());
            if wait > 0.0 {
                self.ports.out[l].busy_until = t + wait;
                self.events.push(t + wait, Event::Background(link));
                return;
            }
        }
        let k = match self.eligible.len() {
            1 => self.eligible[0],
            n => self.eligible[self.rng.below(n as u64) as usize],
        };
        let q = self.ports.out[l].waiters.swap_remove(k).queue;
        self.ports.queue[q as usize].wants = NONE;
        self.send(q, link, t);
    }

    /// Moves the head of input queue `q` onto `link` at `t`.
    fn send(&mut self, q: u32, link: u32, t: Time) {
        let vcs = self.ports.vcs;
        let (l, input) = (link as usize, q as usize / vcs);
        let p = self.dequeue(q as usize);
        if input >= self.ports.links {
            let m = self.packets.rec[p as usize].msg;
            let msg = &self.messages[m];
            if u64::from(msg.packets_queued)
                < msg.bytes.div_ceil(u64::from(self.params.packet_bytes))
            {
                self.inject_next(msg.endpoints.0, m, t);
            }
        }
        let r = &mut self.packets.rec[p as usize];
        let bytes = r.bytes;
        let serialise = f64::from(bytes) / self.ports.out[l].rate;
        // The output streams no faster than the tail comes in (cut-through from a slower
        // link): it holds the link until then.
        let start = t;
        let end = (start + serialise).max(r.tail);
        if r.stalled >= 0.0 {
            self.stats.credit_stall_ns += t - r.stalled;
            r.stalled = -1.0;
        }
        if let Some(v) = &self.background {
            v.borrow_mut().hold(link, start, end);
        }
        self.ports.out[l].busy_until = end;
        self.ports.in_busy[input] = end;
        if let Some(open) = self.ports.charge(l, start, bytes) {
            if open > end {
                self.events.push(open, Event::Tokens(link));
            }
        }
        self.events.push(end, Event::Sent { link, queue: q });
        if input < self.ports.links {
            // The buffer the packet leaves frees as its tail goes.
            let back = end + self.ports.out[input].credit_delay;
            self.events.push(back, Event::Credit(q, bytes));
        }
        self.stats.packet_hops += 1;
        let tail_in = end + self.ports.out[l].latency;
        if self.packets.last_hop(p) {
            // No buffer at an endpoint: no longer queued for the link, nothing held.
            self.ports.out[l].load -= u64::from(bytes);
            self.events.push(tail_in, Event::Deliver(p));
            return;
        }
        let vc = self.packets.next_hop(p).class as usize;
        let credits = &mut self.ports.credits[l * vcs + vc];
        *credits -= bytes;
        let full = 1.0 - f64::from(*credits) / f64::from(self.params.buffer_bytes);
        self.stats.entered(self.link_class[l], full);
        // Held in the far buffer now instead of queued for the link: `load[l]` unchanged
        // until the credit comes back.
        self.packets.rec[p as usize].hop += 1;
        let next = self.packets.next_hop(p).link;
        self.ports.out[next as usize].load += u64::from(bytes);
        let d = self.router_delay;
        let tail = tail_in + d;
        let ready = match self.params.switching {
            Switching::CutThrough => start + self.ports.out[l].latency + d,
            Switching::StoreAndForward => tail,
        };
        // Hybrid mode: background packets ahead of it in that input queue.
        let ready = match &self.background {
            Some(v) => ready + v.borrow_mut().hol_wait(link, vc as u8, ready),
            None => ready,
        };
        let r = &mut self.packets.rec[p as usize];
        r.ready = ready;
        r.tail = tail;
        let q2 = (l * vcs + vc) as u32;
        if self.enqueue(q2 as usize, p) {
            self.events.push(ready, Event::Head(q2));
        }
    }

    fn deliver(&mut self, p: u32, t: Time, out: &mut Vec<Delivery>) {
        let Packet { msg: m, path, .. } = self.packets.rec[p as usize];
        self.routed[path as usize] += 1;
        self.packets.remove(p);
        let msg = &mut self.messages[m];
        msg.packets_left -= 1;
        if msg.packets_left > 0 {
            return;
        }
        let info = TransferInfo {
            wait_ns: (t - msg.zero_load_at).max(0.0),
            blocked: msg.credit_stalls,
            hops: msg.hops,
            path: msg.path,
            ..TransferInfo::default()
        };
        out.push(Delivery {
            id: msg.id,
            at: t,
            info,
        });
        self.messages.remove(m);
    }
}

/// Bytes of background the routing sees at `link` at `t` (none without virtual queues).
fn virtual_load(background: &Option<RefCell<VirtualQueues>>, link: u32, t: Time) -> u64 {
    background
        .as_ref()
        .map_or(0, |v| v.borrow_mut().load(link, t))
}

impl<T: PacketTopology> Fabric for PacketNetwork<T> {
    fn endpoints(&self) -> Option<u32> {
        Some(self.topology.endpoints())
    }

    fn locality(&self, endpoint: u32) -> Option<Locality> {
        self.topology.locality(endpoint)
    }

    fn injection_rate(&self, endpoint: u32) -> f64 {
        self.topology.injection_rate(endpoint)
    }

    /// Control messages take the minimal path's latency, as under flow contention (they
    /// are a few bytes; their queueing is not modelled).
    fn control_at_once(&self) -> bool {
        true
    }

    fn submit(&mut self, now: Time, t: &Transfer) -> Submitted {
        let (src, dst) = (t.src, t.dst);
        if t.kind.is_control() || (t.bytes == 0 && src != dst) {
            let d = if src == dst {
                0.0
            } else {
                self.topology.control_latency(src, dst)
            };
            return Submitted::At(now + d);
        }
        if src == dst {
            return Submitted::At(now + t.bytes as f64 / self.topology.local_rate());
        }
        debug_assert!(now >= self.now);
        self.now = now;
        let size = u64::from(self.params.packet_bytes);
        let count = t.bytes.div_ceil(size);
        let m = self.messages.add(Message {
            id: t.id,
            endpoints: (src, dst),
            bytes: t.bytes,
            submitted: now,
            packets_left: count as u32,
            packets_queued: 0,
            zero_load_at: -1.0,
            hops: 0,
            path: 0,
            credit_stalls: 0,
        });
        self.stats.packets += count;
        self.inject_next(src, m, now);
        Submitted::Later
    }

    fn next_time(&mut self) -> Option<Time> {
        if !self.arbitrations.is_empty() {
            return Some(self.now);
        }
        self.events.peek_time()
    }

    fn advance(&mut self, now: Time, delivered: &mut Vec<Delivery>) {
        loop {
            self.stats.events += 1;
            // An instant's state changes first, then its arbitrations.
            let next = self.events.peek_time().filter(|&t| t <= now);
            match next {
                Some(t) if self.arbitrations.is_empty() || t <= self.now => {
                    let (t, ev) = self.events.pop_due(t).expect("peeked");
                    self.now = t;
                    match ev {
                        Event::Head(q) => self.head(q, t, true),
                        Event::Sent { link, queue } => {
                            self.request_arbitration(link, t);
                            self.input_free(queue, t);
                        }
                        Event::Credit(q, bytes) => {
                            let link = q / self.ports.vcs as u32;
                            self.ports.credits[q as usize] += bytes;
                            self.ports.out[link as usize].load -= u64::from(bytes);
                            self.request_arbitration(link, t);
                        }
                        Event::Deliver(p) => self.deliver(p, t, delivered),
                        Event::Background(link) | Event::Tokens(link) => {
                            self.request_arbitration(link, t);
                        }
                    }
                }
                _ if !self.arbitrations.is_empty() => {
                    std::mem::swap(&mut self.due, &mut self.arbitrations);
                    for i in 0..self.due.len() {
                        self.arbitrate(self.due[i], self.now);
                    }
                    self.due.clear();
                }
                _ => break,
            }
        }
        self.now = self.now.max(now);
    }

    fn reports_transfers(&self) -> bool {
        true
    }

    fn background_as_load(&self) -> bool {
        self.params.background == BackgroundMode::Virtual
    }

    /// The background's demands as virtual queues of trains (background_trains.rs).
    fn background_load(&mut self, demands: &[Demand]) {
        let rates: Vec<f64> = self.ports.out.iter().map(|o| o.rate).collect();
        let flows = trains(
            &mut self.topology,
            &mut self.rng,
            &rates,
            self.spread,
            demands,
        );
        self.background = Some(RefCell::new(VirtualQueues::new(
            &rates,
            flows,
            self.params.packet_bytes,
            self.params.buffer_bytes,
            self.seed,
        )));
    }

    fn path_classes(&self) -> &'static [&'static str] {
        self.topology.path_classes()
    }

    fn stats(&self, _now: Time, out: &mut Vec<(String, f64)>) {
        self.stats.report(self.topology.link_classes().names, out);
        for (name, n) in self.topology.path_classes().iter().zip(&self.routed) {
            out.push((format!("packets_{name}"), *n as f64));
        }
        if let Some(v) = &self.background {
            let v = v.borrow();
            out.push(("virtual_ports".into(), v.loaded_ports as f64));
            out.push(("virtual_ports_capped".into(), v.capped_ports as f64));
            out.push(("virtual_trains".into(), v.trains as f64));
            out.push(("virtual_wait_ns".into(), v.wait_ns));
            out.push(("virtual_hol_ns".into(), v.hol_ns));
        }
    }
}
