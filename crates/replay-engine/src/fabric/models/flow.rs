//! The flow model on the classic topologies: crossbar, k-ary n-tree (fat tree), 3-D torus.
//! Every message is a flow sharing its links max-min fairly; one link class (one capacity,
//! one latency per hop).

use crate::fabric::flow::network::FlowNetwork;
use crate::fabric::flow::graphs::{Duplex, Graph, Routing, Shape};
use crate::fabric::packet::params::{self as packet, PacketParams};
use crate::fabric::packet::PacketNetwork;
use crate::fabric::registry::{Built, Model};
use crate::fabric::Fabric;
use crate::fabric::schema::{Config, ConfigError, DefaultValue, Param, Type};
use crate::prng::SplitMix64;

const ENDPOINTS: Type = Type::Int {
    min: 1,
    max: 1 << 24,
};

pub const MODEL: Model = Model {
    name: "flow",
    doc: "max-min fair flows on a crossbar, k-ary n-tree or 3-D torus (one link class)",
    params: &[
        &[
            Param {
                key: "link_bandwidth_gbps",
                ty: Type::Float {
                    min: 1e-9,
                    max: f64::INFINITY,
                },
                default: DefaultValue::Required,
                doc: "bandwidth of every link (and of copies between ranks on one endpoint)",
            },
            Param {
                key: "hop_latency_ns",
                ty: Type::Float {
                    min: 0.0,
                    max: f64::INFINITY,
                },
                default: DefaultValue::Float(0.0),
                doc: "latency per link crossed",
            },
            Param {
                key: "duplex",
                ty: Type::Choice(&["full", "half"]),
                default: DefaultValue::Str("full"),
                doc: "full: the two directions of a cable are independent; half: they share it",
            },
            Param {
                key: "routing",
                ty: Type::Choice(&["dmodk", "random"]),
                default: DefaultValue::Str("dmodk"),
                doc: "fat-tree up-port choice: destination-mod-k or a seeded random port per flow",
            },
            Param {
                key: "rendezvous_handshake",
                ty: Type::Bool,
                default: DefaultValue::Bool(true),
                doc: "false: rendezvous data leaves once both sides are posted, with no RTS/CTS (SimGrid SMPI's semantics)",
            },
            Param {
                key: "topology",
                ty: Type::Variant(&[
                    (
                        "crossbar",
                        &[Param {
                            key: "endpoints",
                            ty: ENDPOINTS,
                            default: DefaultValue::Required,
                            doc: "ports of the switch",
                        }],
                    ),
                    (
                        "fat_tree",
                        &[
                            Param {
                                key: "k",
                                ty: Type::Int { min: 2, max: 4096 },
                                default: DefaultValue::Required,
                                doc: "switch half-radix k of the k-ary n-tree",
                            },
                            Param {
                                key: "n",
                                ty: Type::Int { min: 1, max: 24 },
                                default: DefaultValue::Required,
                                doc: "levels n (k^n endpoints)",
                            },
                        ],
                    ),
                    (
                        "torus3d",
                        &[Param {
                            key: "dims",
                            ty: Type::IntList {
                                min: 1,
                                max: 1 << 24,
                                len: (3, 3),
                            },
                            default: DefaultValue::Required,
                            doc: "[x, y, z] routers, one endpoint each",
                        }],
                    ),
                ]),
                default: DefaultValue::Required,
                doc: "the graph: kind = crossbar | fat_tree | torus3d",
            },
            packet::CONTENTION,
            packet::TABLE,
        ],
    ],
    build,
};

fn build(c: &Config, seed: u64) -> Result<Built, ConfigError> {
    let t = c.table("topology");
    let shape = match t.str("kind") {
        "crossbar" => Shape::Crossbar {
            endpoints: t.u32("endpoints"),
        },
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
    let duplex = match c.str("duplex") {
        "half" => Duplex::Half,
        _ => Duplex::Full,
    };
    let routing = match c.str("routing") {
        "random" => Routing::Random,
        _ => Routing::DModK,
    };
    let link_rate = c.f64("link_bandwidth_gbps") / 8.0; // Gbit/s = bits/ns → bytes/ns
    let graph = Graph::new(shape, duplex, routing, link_rate, c.f64("hop_latency_ns"))
        .map_err(|message| ConfigError {
            key: "topology".into(),
            message,
        })?;
    let fabric: Box<dyn Fabric> = match PacketParams::of(c)? {
        Some(_) if duplex == Duplex::Half => {
            return Err(ConfigError {
                key: "duplex".into(),
                message: "contention = \"packet\" needs full duplex links (a half-duplex cable has no output port per direction)".into(),
            })
        }
        Some(p) => Box::new(PacketNetwork::new(graph, p, seed ^ 0xFAB)?),
        None => Box::new(FlowNetwork::new(graph, SplitMix64::new(seed ^ 0xFAB))),
    };
    Ok(Built {
        fabric,
        handshake: c.bool("rendezvous_handshake"),
    })
}

#[cfg(test)]
mod tests {
    use crate::fabric::registry::FabricSpec;
    use crate::fabric::schema::Value;
    use crate::fabric::{Delivery, Fabric, Kind, Submitted, Transfer};

    fn crossbar(duplex: &str) -> Box<dyn Fabric> {
        let spec = FabricSpec::from_pairs([
            ("model", Value::from("flow")),
            ("link_bandwidth_gbps", Value::from(8.0)), // 1 byte per ns
            ("hop_latency_ns", Value::from(10.0)),
            ("duplex", Value::from(duplex)),
            (
                "topology",
                Value::table([("kind", Value::from("crossbar")), ("endpoints", Value::Int(4))]),
            ),
        ])
        .unwrap();
        spec.build(0).unwrap().fabric
    }

    fn send(f: &mut dyn Fabric, now: f64, id: u32, src: u32, dst: u32, bytes: u64) -> Submitted {
        f.submit(now, &Transfer::new(id, src, dst, bytes, Kind::Eager))
    }

    fn run(f: &mut dyn Fabric) -> Vec<(u32, f64)> {
        let mut out: Vec<Delivery> = Vec::new();
        while let Some(t) = f.next_time() {
            f.advance(t, &mut out);
        }
        out.iter().map(|d| (d.id, d.at)).collect()
    }

    #[test]
    fn two_flows_into_one_link_each_get_half_the_bandwidth() {
        let mut f = crossbar("full");
        let f = f.as_mut();
        // 0→2 and 1→2 share the down-link of endpoint 2: 1000 B each at 0.5 B/ns = 2000 ns.
        assert_eq!(send(f, 0.0, 0, 0, 2, 1000), Submitted::Later);
        assert_eq!(send(f, 0.0, 1, 1, 2, 1000), Submitted::Later);
        assert_eq!(run(f), vec![(0, 2020.0), (1, 2020.0)]);
        // Alone, the same flow takes 1000 ns + 2 hops.
        send(f, 5000.0, 2, 0, 2, 1000);
        assert_eq!(run(f), vec![(2, 6020.0)]);
    }

    #[test]
    fn full_duplex_directions_do_not_interfere_but_half_duplex_ones_do() {
        let mut full = crossbar("full");
        send(full.as_mut(), 0.0, 0, 0, 1, 1000);
        send(full.as_mut(), 0.0, 1, 1, 0, 1000);
        assert_eq!(run(full.as_mut()), vec![(0, 1020.0), (1, 1020.0)]);
        let mut half = crossbar("half");
        send(half.as_mut(), 0.0, 0, 0, 1, 1000);
        send(half.as_mut(), 0.0, 1, 1, 0, 1000);
        assert_eq!(run(half.as_mut()), vec![(0, 2020.0), (1, 2020.0)]);
    }

    #[test]
    fn a_late_flow_slows_an_early_one_from_its_arrival_on() {
        let mut f = crossbar("full");
        let f = f.as_mut();
        send(f, 0.0, 0, 0, 2, 1000);
        let mut out = Vec::new();
        f.advance(500.0, &mut out); // 500 B sent at full rate
        send(f, 500.0, 1, 1, 2, 250);
        // Both at 0.5 B/ns: flow 1 drains at 1000; flow 0 has 250 B left at 1000, alone → 1250.
        assert_eq!(run(f), vec![(1, 1020.0), (0, 1270.0)]);
    }

    #[test]
    fn control_messages_take_the_path_latency_and_no_bandwidth() {
        let mut f = crossbar("full");
        let f = f.as_mut();
        assert!(f.control_at_once());
        send(f, 0.0, 0, 0, 2, 1000);
        let rts = Transfer::new(1, 1, 2, 1 << 20, Kind::Rts);
        assert_eq!(f.submit(0.0, &rts), Submitted::At(20.0));
        assert_eq!(run(f), vec![(0, 1020.0)]);
    }

    #[test]
    fn utilisation_counts_bytes_per_link_class() {
        let mut f = crossbar("full");
        send(f.as_mut(), 0.0, 0, 0, 1, 1000);
        run(f.as_mut());
        let mut stats = Vec::new();
        f.stats(2000.0, &mut stats);
        let get = |k: &str| stats.iter().find(|s| s.0 == k).map(|s| s.1);
        // 2 of the 8 directed links carried 1000 B in 2000 ns at 1 B/ns.
        assert_eq!(get("utilisation_link_max"), Some(0.5));
        assert_eq!(get("utilisation_link_mean"), Some(0.125));
        assert_eq!(get("flows"), Some(1.0));
    }
}
