//! The state of the network's ports, struct of arrays: per directed link its output
//! (rate, cable latency, busy-until, the credits it holds for each virtual channel of the
//! buffer at its far end, the input buffers waiting for it) and per input buffer (the far
//! end of a link, or an endpoint's injection queue) its FIFO per virtual channel and its
//! read port. A router moves one packet at a time out of each input and into each
//! output; an input's FIFO serves its head only, so a head waiting for a busy output
//! blocks the packets behind it (head-of-line blocking), and a packet leaves only with a
//! credit for the whole packet in the next buffer (lossless, InfiniBand-style), so a full
//! buffer stops its upstream link and back-pressure spreads hop by hop.

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

pub struct Ports {
    /// Virtual channels per port.
    pub vcs: usize,
    /// Directed links; inputs are `links` link buffers then one injection queue per
    /// endpoint.
    pub links: usize,
    /// Per link: bytes per ns, cable latency, credit return delay (ns).
    pub rate: Vec<f64>,
    pub latency: Vec<f64>,
    pub credit_delay: Vec<f64>,
    /// Per link: the output is serialising a packet until then.
    pub out_busy: Vec<Time>,
    /// Per link and VC: free bytes of the far end's buffer as the sender knows them.
    pub credits: Vec<u32>,
    /// Per link: bytes its far-end buffer holds or was promised (credits out, all VCs)
    /// plus bytes of packets in input queues whose next hop it is: the load adaptive
    /// routing scores (CODES' vc_occupancy plus queued bytes).
    pub load: Vec<u64>,
    /// Per link: the heads of input queues that wait for it.
    pub waiters: Vec<Vec<Waiter>>,
    /// Per link: the instant of its pending arbitration (negative: none).
    pub arbitration_at: Vec<Time>,
    /// Per input: the read port is moving a packet out until then.
    pub in_busy: Vec<Time>,
    /// Per input queue (input × vcs + vc): its first and last packet (NONE: empty); the
    /// packets between are chained by their `next`, in arrival order.
    pub first: Vec<u32>,
    pub last: Vec<u32>,
    /// Per input queue: the link whose `waiters` list its head (NONE: it is not listed).
    pub wants: Vec<u32>,
    /// Buffer bytes per port and VC.
    pub buffer_bytes: u32,
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
        Self {
            vcs,
            links,
            rate,
            latency,
            credit_delay,
            out_busy: vec![0.0; links],
            credits: vec![buffer_bytes; links * vcs],
            load: vec![0; links],
            waiters: vec![Vec::new(); links],
            arbitration_at: vec![-1.0; links],
            in_busy: vec![0.0; inputs],
            first: vec![NONE; inputs * vcs],
            last: vec![NONE; inputs * vcs],
            wants: vec![NONE; inputs * vcs],
            buffer_bytes,
        }
    }

    /// The head of input queue `q`, if any.
    pub fn head(&self, q: usize) -> Option<u32> {
        let p = self.first[q];
        (p != NONE).then_some(p)
    }

    /// The injection queue of an endpoint, as an input.
    pub fn injection(&self, endpoint: u32) -> usize {
        self.links + endpoint as usize
    }
}
