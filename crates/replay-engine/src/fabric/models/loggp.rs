//! LogGP (Alexandrov, Ionescu, Schauser & Scheiman, SPAA 1995) with LogGOPS's per-byte
//! overhead O: latency L, gap g between messages and G per byte at the sender's NIC, CPU
//! overhead o (+ nO) per message at both ends. o, O and the reduction cost γ are host costs
//! the engine charges; rendezvous messages pay an RTS/CTS handshake of L each.

use crate::config::{HostParams, GAMMA};
use crate::fabric::registry::{Built, Model};
use crate::fabric::schema::{Config, ConfigError, DefaultValue, Param, Type};
use crate::fabric::{Fabric, Submitted, Time, Transfer};

const NON_NEGATIVE: Type = Type::Float {
    min: 0.0,
    max: f64::INFINITY,
};

pub const MODEL: Model = Model {
    name: "loggp",
    doc: "LogGP (Alexandrov et al. 1995) with LogGOPS's O: contention-free, NIC gap g/G at the sender, RTS/CTS handshake",
    params: &[
        &[
            Param {
                key: "L_ns",
                ty: NON_NEGATIVE,
                default: DefaultValue::Required,
                doc: "network latency L",
            },
            Param {
                key: "o_ns",
                ty: NON_NEGATIVE,
                default: DefaultValue::Float(0.0),
                doc: "CPU overhead o per message, at sender and receiver",
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
                key: "O_ns_per_byte",
                ty: NON_NEGATIVE,
                default: DefaultValue::Float(0.0),
                doc: "CPU overhead per byte O (LogGOPS)",
            },
        ],
        GAMMA,
    ],
    build,
};

fn build(c: &Config, _seed: u64) -> Result<Built, ConfigError> {
    let fabric = LogGp {
        l_ns: c.f64("L_ns"),
        g_ns: c.f64("g_ns"),
        g_ns_per_byte: c.f64("G_ns_per_byte"),
        nic_free: Vec::new(),
    };
    let host = HostParams {
        overhead_ns: c.f64("o_ns"),
        overhead_ns_per_byte: c.f64("O_ns_per_byte"),
        gamma_ns_per_byte: c.f64("gamma_ns_per_byte"),
        handshake: true,
    };
    Ok(Built {
        fabric: Box::new(fabric),
        host,
    })
}

pub struct LogGp {
    l_ns: f64,
    g_ns: f64,
    g_ns_per_byte: f64,
    /// When each sender's NIC may inject its next message (gap g, G per byte).
    nic_free: Vec<Time>,
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
        // The NIC is busy max(g, (n-1)G); the last byte lands L after injection.
        let s = t.src as usize;
        if self.nic_free.len() <= s {
            self.nic_free.resize(s + 1, 0.0);
        }
        let start = now.max(self.nic_free[s]);
        let wire = t.bytes.saturating_sub(1) as f64 * self.g_ns_per_byte;
        self.nic_free[s] = start + wire.max(self.g_ns);
        Submitted::At(start + wire + self.l_ns)
    }

    fn control_at_once(&self) -> bool {
        true
    }

    fn next_time(&mut self) -> Option<Time> {
        None
    }

    fn advance(&mut self, _now: Time, _delivered: &mut Vec<crate::fabric::Delivery>) {}

    fn holds_transfers(&self) -> bool {
        false
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
        ])
        .unwrap();
        let Built { mut fabric, host } = spec.build(0).unwrap();
        assert_eq!((host.overhead_ns, host.handshake), (7.0, true));
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
}
