//! The state of the network's ports, struct of arrays: per directed link its output
//! (rate, cable latency, busy-until, the credits it holds for each virtual channel of the
//! buffer at its far end, the input buffers waiting for it) and per input buffer (the far
//! end of a link, or an endpoint's injection queue) its FIFO per virtual channel and its
//! read port. A router moves one packet at a time out of each input and into each
//! output; an input's FIFO serves its head only, so a head waiting for a busy output
//! blocks the packets behind it (head-of-line blocking), and a packet leaves only with a
//! credit for the whole packet in the next buffer (lossless, InfiniBand-style), so a full
//! buffer stops its upstream link and back-pressure spreads hop by hop.

use std::collections::VecDeque;

use crate::fabric::Time;

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
    /// Per link: bytes of packets in input buffers whose next hop it is (queued for it).
    pub demand: Vec<u64>,
    /// Per link: the input queues (input × vcs + vc) whose head packet waits for it.
    pub waiters: Vec<Vec<u32>>,
    /// Per link: the instant of its pending arbitration (negative: none).
    pub arbitration_at: Vec<Time>,
    /// Per input: the read port is moving a packet out until then.
    pub in_busy: Vec<Time>,
    /// Per input queue (input × vcs + vc): packet ids in arrival order.
    pub fifo: Vec<VecDeque<u32>>,
    /// Per input queue: its head is listed in its next link's `waiters`.
    pub waiting: Vec<bool>,
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
            demand: vec![0; links],
            waiters: vec![Vec::new(); links],
            arbitration_at: vec![-1.0; links],
            in_busy: vec![0.0; inputs],
            fifo: (0..inputs * vcs).map(|_| VecDeque::new()).collect(),
            waiting: vec![false; inputs * vcs],
            buffer_bytes,
        }
    }

    /// The injection queue of an endpoint, as an input.
    pub fn injection(&self, endpoint: u32) -> usize {
        self.links + endpoint as usize
    }

    /// Bytes a link's far-end buffer holds or has promised (all VCs), plus the bytes
    /// queued for it: the load adaptive routing scores.
    pub fn occupancy(&self, link: u32) -> u64 {
        let l = link as usize;
        let held: u64 = self.credits[l * self.vcs..(l + 1) * self.vcs]
            .iter()
            .map(|&c| u64::from(self.buffer_bytes - c))
            .sum();
        held + self.demand[l]
    }
}
