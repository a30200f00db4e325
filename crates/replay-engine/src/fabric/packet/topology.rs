//! What the packet engine asks of a topology beyond what the flow model does: the cable
//! latency of each link and the forwarding delay of a router (so that a hop costs the same
//! numbers in both contention models), a route per packet (read from the current buffer
//! occupancy where the routing is adaptive) and the virtual-channel class of every hop of
//! it, which is the topology's deadlock-freedom rule.
//!
//! Each topology implements this next to its routing (flow/graphs, models/tree.rs,
//! models/dragonfly_plus.rs): one copy of every wiring and routing rule.

use crate::fabric::flow::network::Topology;
use crate::prng::SplitMix64;

/// One hop of a packet's route: the link, and the virtual-channel class it takes there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hop {
    pub link: u32,
    pub class: u8,
}

pub trait PacketTopology: Topology {
    /// Cable latency of a link, ns.
    fn link_latency(&self, link: u32) -> f64;

    /// Forwarding delay of every router a packet crosses, ns.
    fn router_delay(&self) -> f64;

    /// The most links a packet route can cross.
    fn max_hops(&self) -> usize;

    /// Virtual-channel classes the deadlock-freedom rule uses (every hop's `class` is
    /// below this).
    fn vc_classes(&self) -> u8 {
        1
    }

    /// Picks the route of one packet from `src` to `dst` (src != dst) now: the links it
    /// crosses into `links` (cleared first); returns its path class (`path_classes`).
    /// `load(link)` is the bytes buffered behind and queued for a link now (CODES'
    /// vc_occupancy plus queued bytes).
    fn packet_route(
        &mut self,
        src: u32,
        dst: u32,
        load: &dyn Fn(u32) -> u64,
        rng: &mut SplitMix64,
        links: &mut Vec<u32>,
    ) -> u8;

    /// Whether `reroute` ever decides anything (progressive adaptive routings).
    fn reroutes(&self) -> bool {
        false
    }

    /// Progressive adaptive routing: a packet that crossed the first `taken` links of its
    /// route `links` (to `dst`) reached the head of its buffer; the router there may decide
    /// the rest again on the load now, rewriting `links` from `taken` on. Returns the
    /// route's path class when it decided, None when nothing is decided there.
    fn reroute(
        &mut self,
        _src: u32,
        _dst: u32,
        _links: &mut Vec<u32>,
        _taken: usize,
        _load: &dyn Fn(u32) -> u64,
        _rng: &mut SplitMix64,
    ) -> Option<u8> {
        None
    }

    /// The hops of a route with the virtual-channel class of each (appended to `out`,
    /// cleared first): the deadlock-freedom rule. One class by default.
    fn hop_classes(&self, links: &[u32], out: &mut Vec<Hop>) {
        out.clear();
        out.extend(links.iter().map(|&link| Hop { link, class: 0 }));
    }
}

/// Each hop's VC from its deadlock-freedom class: `spread` VCs per class, a destination
/// always on the same one of them.
pub fn spread_classes(hops: &mut [Hop], spread: u32, dst: u32) {
    for h in hops {
        h.class = (u32::from(h.class) * spread + dst % spread) as u8;
    }
}
