//! The state of the network's ports, in arrays by port: per directed link its output
//! (rate, cable latency, busy-until, load and the input queues waiting for it, in one
//! record; the credits it holds for each virtual channel of the buffer at its far end) and
//! per input buffer (the far end of a link, or an endpoint's injection queue) its FIFO per
//! virtual channel and its read port. A router moves one packet at a time out of each input and into each
//! output; an input's FIFO serves its head only, so a head waiting for a busy output
//! blocks the packets behind it (head-of-line blocking), and a packet leaves only with a
//! credit for the whole packet in the next buffer (lossless, InfiniBand-style), so a full
//! buffer stops its upstream link and back-pressure spreads hop by hop.

use super::shaper::Shaper;
use crate::fabric::Time;

/// No packet (an empty queue's ends, the last packet's `next`).
pub const NONE: u32 = u32::MAX;

/// The head of an input queue waiting for an output, with what arbitration checks (a head
/// stays the head until it leaves), so a scan of the waiters reads no packet.
#[derive(Debug, Clone, Copy)]
pub struct Waiter {
    /// Input queue (input × vcs + vc) and its head packet.
    pub queue: u32,
    pub packet: u32,
    pub bytes: u32,
    /// The credits it needs, as an index into `credits` (NONE: none, its last hop).
    pub credit: u32,
}

/// One directed link's output port: what an event at it reads, together (one or two
/// cache lines).
#[derive(Debug, Clone)]
pub struct Output {
    /// Bytes per ns, cable latency and credit return delay (ns).
    pub rate: f64,
    pub latency: f64,
    pub credit_delay: f64,
    /// The output is serialising a packet until then.
    pub busy_until: Time,
    /// The instant of its pending arbitration (negative: none).
    pub arbitration_at: Time,
    /// Bytes its far-end buffer holds or was promised (credits out, all VCs) plus bytes of
    /// packets in input queues whose next hop it is: the load adaptive routing scores
    /// (CODES' vc_occupancy plus queued bytes).
    pub load: u64,
    /// The heads of input queues that wait for it.
    pub waiters: Vec<Waiter>,
}

/// One input queue (input × vcs + vc): its first and last packet (NONE: empty), the
/// packets between chained by their `next` in arrival order; the link whose `waiters`
/// list its head (NONE: not listed).
#[derive(Debug, Clone, Copy)]
pub struct Queue {
    pub first: u32,
    pub last: u32,
    pub wants: u32,
}

pub struct Ports {
    /// Virtual channels per port.
    pub vcs: usize,
    /// Directed links; inputs are `links` link buffers then one injection queue per
    /// endpoint.
    pub links: usize,
    /// Per link.
    pub out: Vec<Output>,
    /// Per link and VC: free bytes of the far end's buffer as the sender knows them.
    pub credits: Vec<u32>,
    /// Per input: the read port is moving a packet out until then.
    pub in_busy: Vec<Time>,
    /// Per input queue (input × vcs + vc).
    pub queue: Vec<Queue>,
    /// Buffer bytes per port and VC.
    pub buffer_bytes: u32,
    /// Per link, its shaper if its class has a token bucket (shaper.rs); empty when no
    /// link has one.
    pub shapers: Vec<Option<Shaper>>,
}

impl Ports {
    pub fn new(
        rate: Vec<f64>,
        latency: Vec<f64>,
        credit_delay: Vec<f64>,
        endpoints: usize,
        vcs: usize,
        buffer_bytes: u32,
    ) -> Self {
        let links = rate.len();
        let inputs = links + endpoints;
        let out = (0..links)
            .map(|l| Output {
                rate: rate[l],
                latency: latency[l],
                credit_delay: credit_delay[l],
                busy_until: 0.0,
                arbitration_at: -1.0,
                load: 0,
                waiters: Vec::new(),
            })
            .collect();
        let empty = Queue {
            first: NONE,
            last: NONE,
            wants: NONE,
        };
        Self {
            vcs,
            links,
            out,
            credits: vec![buffer_bytes; links * vcs],
            in_busy: vec![0.0; inputs],
            queue: vec![empty; inputs * vcs],
            buffer_bytes,
            shapers: Vec::new(),
        }
    }

    /// Whether link `l`'s shaper holds its packets back at `t` (its tokens below 0).
    pub fn shaped_shut(&self, l: usize, t: Time) -> bool {
        matches!(self.shapers.get(l), Some(Some(s)) if !s.open(t))
    }

    /// Charges a packet of `bytes` starting on link `l` at `t` to its shaper, if it has
    /// one: when the link may send again (its tokens back at 0).
    pub fn charge(&mut self, l: usize, t: Time, bytes: u32) -> Option<Time> {
        match self.shapers.get_mut(l) {
            Some(Some(s)) => Some(s.charge(t, bytes)),
            _ => None,
        }
    }

    /// The head of input queue `q`, if any.
    pub fn head(&self, q: usize) -> Option<u32> {
        let p = self.queue[q].first;
        (p != NONE).then_some(p)
    }

    /// The injection queue of an endpoint, as an input.
    pub fn injection(&self, endpoint: u32) -> usize {
        self.links + endpoint as usize
    }
}
