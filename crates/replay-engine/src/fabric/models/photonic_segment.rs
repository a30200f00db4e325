//! Photonic segment switching (seed 002, "Segment Switching", IEEE Access 2020) on a 3-D
//! torus or a k-ary n-tree of WDM links: circuit, packetised-circuit or segment switching
//! (`fabric/photonic_networks/segment_switching/`), with buffers on a share of the torus switches or on the
//! top levels of the fat tree. Seed defaults: 5 channels × 320 Gb/s per link (§III-2),
//! MTU 4 KB (§VI-A).

use crate::fabric::photonic_networks::circuit_net::HopGraph;
use crate::fabric::flow::graphs::{Duplex, Graph, Routing, Shape};
use crate::fabric::registry::{Built, Model};
use crate::fabric::schema::{Config, ConfigError, DefaultValue, Param, Type};
use crate::fabric::photonic_networks::segment_switching::{Mode, Params, SegmentNet};
use crate::fabric::{Delivery, Fabric, Submitted, Time, Transfer};

const POSITIVE: Type = Type::Float {
    min: 1e-9,
    max: f64::INFINITY,
};

pub const MODEL: Model = Model {
    name: "photonic_segment",
    doc: "photonic circuit / packetised / segment switching on a WDM torus or fat tree (seed 002, Algorithm 1)",
    params: &[
        &[
            Param {
                key: "switching",
                ty: Type::Choice(&["circuit", "packet", "segment"]),
                default: DefaultValue::Str("segment"),
                doc: "circuit: whole message; packet: a circuit per MTU packet; segment: Algorithm 1 with buffers",
            },
            Param {
                key: "channels",
                ty: Type::Int { min: 1, max: 4096 },
                default: DefaultValue::Int(5),
                doc: "WDM channels per link (seed 002: 5)",
            },
            Param {
                key: "channel_bandwidth_gbps",
                ty: POSITIVE,
                default: DefaultValue::Float(320.0),
                doc: "rate of one channel (seed 002: 320 Gb/s)",
            },
            Param {
                key: "cycle_ns",
                ty: Type::Float {
                    min: 0.0,
                    max: f64::INFINITY,
                },
                default: DefaultValue::Float(0.1),
                doc: "reservation cycle per hop, paid forward and back (seed 002 §V states no value; see DESIGN.md)",
            },
            Param {
                key: "mtu_bytes",
                ty: Type::Int {
                    min: 1,
                    max: 1 << 40,
                },
                default: DefaultValue::Int(4096),
                doc: "packet size of the packet and segment modes (seed 002: 4 KB)",
            },
            Param {
                key: "buffer_bytes",
                ty: Type::Int {
                    min: 0,
                    max: 1 << 40,
                },
                default: DefaultValue::Int(1 << 20),
                doc: "buffer of a buffered switch (whole MTU packets; seed 002: 32 KB to 16 MB)",
            },
            Param {
                key: "topology",
                ty: Type::Variant(&[
                    (
                        "fat_tree",
                        &[
                            Param {
                                key: "k",
                                ty: Type::Int { min: 2, max: 4096 },
                                default: DefaultValue::Required,
                                doc: "switch half-radix k of the k-ary n-tree (seed 002: 12)",
                            },
                            Param {
                                key: "n",
                                ty: Type::Int { min: 1, max: 24 },
                                default: DefaultValue::Required,
                                doc: "levels n, k^n endpoints (seed 002: 3)",
                            },
                            Param {
                                key: "buffer_levels",
                                ty: Type::Int { min: 0, max: 24 },
                                default: DefaultValue::Int(1),
                                doc: "buffers on this many top levels (seed 002: 1, 2, 3)",
                            },
                        ],
                    ),
                    (
                        "torus3d",
                        &[
                            Param {
                                key: "dims",
                                ty: Type::IntList {
                                    min: 1,
                                    max: 1 << 24,
                                    len: (3, 3),
                                },
                                default: DefaultValue::Required,
                                doc: "[x, y, z] routers, one endpoint each (seed 002: 12×12×12)",
                            },
                            Param {
                                key: "buffer_every",
                                ty: Type::Int { min: 0, max: 1 << 24 },
                                default: DefaultValue::Int(1),
                                doc: "a buffer every n switches along each dimension: 1 all, 2 half, 4 a quarter; 0 none",
                            },
                        ],
                    ),
                ]),
                default: DefaultValue::Required,
                doc: "the graph: kind = fat_tree | torus3d (fat-tree up-ports adaptive, torus dimension order)",
            },
        ],
    ],
    build,
};

fn build(c: &Config, _seed: u64) -> Result<Built, ConfigError> {
    let t = c.table("topology");
    let shape = match t.str("kind") {
        "fat_tree" => Shape::FatTree {
            k: t.u32("k"),
            n: t.u32("n"),
        },
        _ => {
            let d = t.i64s("dims");
            Shape::Torus3d {
                x: d[0] as u32,
                y: d[1] as u32,
                z: d[2] as u32,
            }
        }
    };
    let channels = c.u32("channels") as u16;
    let channel_rate = c.f64("channel_bandwidth_gbps") / 8.0; // Gbit/s → bytes/ns
    let cycle_ns = c.f64("cycle_ns");
    let graph = Graph::new(
        shape,
        Duplex::Full,
        Routing::DModK,
        channel_rate * f64::from(channels),
        cycle_ns,
    )
    .map_err(|message| ConfigError {
        key: "topology".into(),
        message,
    })?;
    let mode = match c.str("switching") {
        "circuit" => Mode::Circuit,
        "packet" => Mode::Packet,
        _ => Mode::Segment,
    };
    let mtu = c.i64("mtu_bytes") as u64;
    let entries = (c.i64("buffer_bytes") as u64 / mtu).min(u64::from(u32::MAX)) as u32;
    let buffered = |s: u32| match shape {
        Shape::FatTree { n, .. } => graph.switch_level(s) + t.u32("buffer_levels") > n,
        _ => {
            let every = t.u32("buffer_every");
            every > 0 && graph.switch_coords(s).iter().sum::<u32>() % every == 0
        }
    };
    let buffer_entries = (0..HopGraph::switches(&graph))
        .map(|s| if mode == Mode::Segment && buffered(s) { entries } else { 0 })
        .collect();
    let params = Params {
        mode,
        mtu,
        channel_rate,
        cycle_ns,
        buffer_entries,
    };
    Ok(Built {
        fabric: Box::new(PhotonicSegment {
            net: SegmentNet::new(graph, channels, params),
        }),
        handshake: true,
    })
}

/// The fabric face of a segment-switched network. RTS and CTS travel the electrical
/// control plane that sets the circuits up: one cycle per hop, no channel.
pub struct PhotonicSegment {
    net: SegmentNet<Graph>,
}

impl PhotonicSegment {
    /// Whether every message left and every channel and buffer entry is free again.
    pub fn is_drained(&self) -> bool {
        self.net.is_drained()
    }
}

impl Fabric for PhotonicSegment {
    fn endpoints(&self) -> Option<u32> {
        Some(HopGraph::endpoints(self.net.graph()))
    }

    fn injection_rate(&self, _endpoint: u32) -> f64 {
        self.net.params().channel_rate
    }

    fn control_at_once(&self) -> bool {
        true
    }

    fn submit(&mut self, now: Time, t: &Transfer) -> Submitted {
        let p = self.net.params();
        if t.kind.is_control() {
            let hops = HopGraph::hops(self.net.graph(), t.src, t.dst);
            return Submitted::At(now + f64::from(hops) * p.cycle_ns);
        }
        if t.src == t.dst {
            // Same endpoint: a copy at one channel's rate, outside the network.
            return Submitted::At(now + t.bytes as f64 / p.channel_rate);
        }
        self.net.start(now, t.id, t.src, t.dst, t.bytes);
        Submitted::Later
    }

    fn next_time(&mut self) -> Option<Time> {
        self.net.next_time()
    }

    fn advance(&mut self, now: Time, delivered: &mut Vec<Delivery>) {
        self.net.advance(now, delivered);
    }

    fn reports_transfers(&self) -> bool {
        true
    }

    fn path_classes(&self) -> &'static [&'static str] {
        &["end_to_end", "buffered"]
    }

    fn stats(&self, now: Time, out: &mut Vec<(String, f64)>) {
        self.net.stats(now, out);
    }
}
