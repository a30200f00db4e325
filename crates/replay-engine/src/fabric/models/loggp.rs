//! LogGP (Alexandrov, Ionescu, Schauser & Scheiman, SPAA 1995) with LogGOPS's per-byte
//! overhead O: latency L, gap g between messages and G per byte, CPU overhead o (+ nO) per
//! message at both ends. o, O and the reduction cost γ are the host model's (fabric/host.rs:
//! `[host]` overhead_ns and overhead_ns_per_byte, or `o_ns` and `O_ns_per_byte` at the top
//! level of the file), costs the engine charges; rendezvous messages pay an RTS/CTS
//! handshake of L each.
//!
//! LogGP's g is "the minimum time interval between consecutive message transmissions or
//! consecutive message receptions at a processor": each endpoint has `ports` NIC channels
//! per direction (fabric/ports.rs), a message holding one for max(g, (n-1)G) when it leaves
//! and one of its destination's when its first byte arrives (L after leaving); its last
//! byte lands (n-1)G after it took the receive channel. `ports = 0` is the older form of
//! this model: one injection channel, reception unlimited.

use crate::fabric::ports::{Costs, PortedLinks, Ports};
use crate::fabric::registry::{Built, Model};
use crate::fabric::schema::{Config, ConfigError, DefaultValue, Param, Type};
use crate::fabric::{Delivery, Fabric, Submitted, Time, Transfer};

const NON_NEGATIVE: Type = Type::Float {
    min: 0.0,
    max: f64::INFINITY,
};

pub const MODEL: Model = Model {
    name: "loggp",
    doc: "LogGP (Alexandrov et al. 1995) with LogGOPS's O: NIC gap g/G on injection and reception, RTS/CTS handshake",
    params: &[
        &[
            Param {
                key: "L_ns",
                ty: NON_NEGATIVE,
                default: DefaultValue::Required,
                doc: "network latency L",
            },
            Param {
                key: "g_ns",
                ty: NON_NEGATIVE,
                default: DefaultValue::Float(0.0),
                doc: "gap g: least time between two messages leaving one NIC",
            },
            Param {
                key: "G_ns_per_byte",
                ty: NON_NEGATIVE,
                default: DefaultValue::Float(0.0),
                doc: "gap per byte G (1 / NIC bandwidth)",
            },
            Param {
                key: "ports",
                ty: Type::Int { min: 0, max: 1024 },
                default: DefaultValue::Int(1),
                doc: "NIC channels per endpoint and direction, each applying g/G; 0 = one injection channel and unlimited reception (the model before reception gaps)",
            },
        ],
    ],
    build,
};

fn build(c: &Config, _seed: u64) -> Result<Built, ConfigError> {
    let ports = c.u32("ports");
    let fabric = LogGp {
        l_ns: c.f64("L_ns"),
        g_ns: c.f64("g_ns"),
        g_ns_per_byte: c.f64("G_ns_per_byte"),
        injection: Ports::new(1),
        links: (ports > 0).then(|| PortedLinks::new(ports)),
    };
    Ok(Built {
        fabric: Box::new(fabric),
        handshake: true,
    })
}

pub struct LogGp {
    l_ns: f64,
    g_ns: f64,
    g_ns_per_byte: f64,
    /// `ports = 0`: the one injection channel of each sender.
    injection: Ports,
    /// `ports >= 1`: channels on both sides.
    links: Option<PortedLinks>,
}

impl Fabric for LogGp {
    fn endpoints(&self) -> Option<u32> {
        None
    }

    fn injection_rate(&self, _endpoint: u32) -> f64 {
        1.0 / self.g_ns_per_byte
    }

    fn submit(&mut self, now: Time, t: &Transfer) -> Submitted {
        if t.kind.is_control() {
            return Submitted::At(now + self.l_ns);
        }
        // A channel is busy max(g, (n-1)G); the last byte lands L after injection.
        let wire = t.bytes.saturating_sub(1) as f64 * self.g_ns_per_byte;
        let busy = wire.max(self.g_ns);
        let Some(links) = self.links.as_mut() else {
            let start = self.injection.send(t.src, now, busy);
            return Submitted::At(start + wire + self.l_ns);
        };
        let costs = Costs {
            send_busy: busy,
            recv_busy: busy,
            lead: self.l_ns,
            wire,
        };
        links.submit(now, t, costs);
        Submitted::Later
    }

    fn control_at_once(&self) -> bool {
        true
    }

    fn next_time(&mut self) -> Option<Time> {
        self.links.as_ref().and_then(PortedLinks::next_time)
    }

    fn advance(&mut self, now: Time, delivered: &mut Vec<Delivery>) {
        if let Some(links) = self.links.as_mut() {
            links.advance(now, delivered);
        }
    }

    fn holds_transfers(&self) -> bool {
        self.links.is_some()
    }

    fn serves_in_post_order(&self) -> bool {
        self.links.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::registry::FabricSpec;
    use crate::fabric::schema::Value;
    use crate::fabric::Kind;

    fn transfer(id: u32, src: u32, dst: u32, bytes: u64) -> Transfer {
        Transfer::new(id, src, dst, bytes, Kind::Eager)
    }

    #[test]
    fn serializes_injection_at_the_sender() {
        let spec = FabricSpec::from_pairs([
            ("model", Value::from("loggp")),
            ("L_ns", Value::from(100.0)),
            ("g_ns", Value::from(50.0)),
            ("G_ns_per_byte", Value::from(2.0)),
            ("o_ns", Value::from(7.0)),
            ("ports", Value::Int(0)),
        ])
        .unwrap();
        let Built {
            mut fabric,
            handshake,
        } = spec.build(0).unwrap();
        assert_eq!((spec.host().overhead_ns, handshake), (7.0, true));
        let f = fabric.as_mut();
        assert_eq!(f.submit(0.0, &transfer(0, 0, 1, 11)), Submitted::At(20.0 + 100.0));
        // The NIC is busy until max(g, 20) = 50.
        assert_eq!(f.submit(0.0, &transfer(1, 0, 2, 1)), Submitted::At(50.0 + 100.0));
        assert_eq!(f.submit(0.0, &transfer(2, 3, 2, 1)), Submitted::At(100.0));
        // Control messages take L and leave the NIC alone.
        let rts = Transfer {
            kind: Kind::Rts,
            ..transfer(3, 0, 1, 1 << 20)
        };
        assert_eq!(f.submit(0.0, &rts), Submitted::At(100.0));
    }

    #[test]
    fn applies_the_gap_on_reception_too() {
        let spec = FabricSpec::from_pairs([
            ("model", Value::from("loggp")),
            ("L_ns", Value::from(100.0)),
            ("g_ns", Value::from(50.0)),
            ("G_ns_per_byte", Value::from(2.0)),
        ])
        .unwrap();
        let Built { mut fabric, .. } = spec.build(0).unwrap();
        let f = fabric.as_mut();
        assert!(f.holds_transfers());
        // 0 -> 2 and 1 -> 2 leave at once; both first bytes reach 2 at 100: the second
        // waits for the first's reception gap max(g, 10 G) = 50
        assert_eq!(f.submit(0.0, &transfer(0, 0, 2, 6)), Submitted::Later);
        assert_eq!(f.submit(0.0, &transfer(1, 1, 2, 6)), Submitted::Later);
        let mut out = Vec::new();
        while let Some(t) = f.next_time() {
            f.advance(t, &mut out);
        }
        let got: Vec<(u32, f64)> = out.iter().map(|d| (d.id, d.at)).collect();
        assert_eq!(got, vec![(0, 110.0), (1, 160.0)]);
    }
}
