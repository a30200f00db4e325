//! A toy fabric, the registry's test fixture: every transfer, control messages included, is
//! delivered through the fabric's own timers after `setup_ns` plus its bytes at
//! `rate_gbps`, one transfer at a time per destination (a held queue). It exists to prove
//! that a model is this one file: build.rs registers it with the `fixture-fabrics` feature.

use crate::fabric::registry::{Built, Model};
use crate::fabric::schema::{Config, ConfigError, DefaultValue, Param, Type};
use crate::fabric::timers::Timers;
use crate::fabric::{Delivery, Fabric, Submitted, Time, Transfer, TransferInfo};

pub const MODEL: Model = Model {
    name: "toy_delay",
    doc: "test fixture: a fixed setup delay per transfer, one transfer at a time per destination",
    params: &[&[
        Param {
            key: "setup_ns",
            ty: Type::Float {
                min: 0.0,
                max: 1e9,
            },
            default: DefaultValue::Float(100.0),
            doc: "delay before every transfer (control messages too)",
        },
        Param {
            key: "rate_gbps",
            ty: Type::Float {
                min: 1e-3,
                max: 1e6,
            },
            default: DefaultValue::Required,
            doc: "transfer rate once set up",
        },
        Param {
            key: "ports",
            ty: Type::Int { min: 1, max: 4096 },
            default: DefaultValue::Int(64),
            doc: "endpoints",
        },
    ]],
    build,
};

fn build(c: &Config, _seed: u64) -> Result<Built, ConfigError> {
    Ok(Built {
        fabric: Box::new(ToyDelay {
            setup: c.f64("setup_ns"),
            rate: c.f64("rate_gbps") / 8.0,
            ports: c.u32("ports"),
            busy_until: vec![0.0; c.u32("ports") as usize],
            timers: Timers::default(),
            delivered: 0,
        }),
        handshake: true,
    })
}

struct ToyDelay {
    setup: f64,
    rate: f64,
    ports: u32,
    busy_until: Vec<Time>,
    timers: Timers<Delivery>,
    delivered: u64,
}

impl Fabric for ToyDelay {
    fn endpoints(&self) -> Option<u32> {
        Some(self.ports)
    }

    fn injection_rate(&self, _endpoint: u32) -> f64 {
        self.rate
    }

    fn submit(&mut self, now: Time, t: &Transfer) -> Submitted {
        let bytes = if t.kind.is_control() { 0 } else { t.bytes };
        let start = now.max(self.busy_until[t.dst as usize]);
        let at = start + self.setup + bytes as f64 / self.rate;
        self.busy_until[t.dst as usize] = at;
        let info = TransferInfo {
            setup_ns: self.setup,
            wait_ns: start - now,
            blocked: u32::from(start > now),
            hops: 1,
            path: u8::from(t.kind.is_control()),
        };
        self.timers.push(at, Delivery { id: t.id, at, info });
        Submitted::Later
    }

    fn next_time(&mut self) -> Option<Time> {
        self.timers.peek_time()
    }

    fn advance(&mut self, now: Time, delivered: &mut Vec<Delivery>) {
        while let Some((_, d)) = self.timers.pop_due(now) {
            self.delivered += 1;
            delivered.push(d);
        }
    }

    fn reports_transfers(&self) -> bool {
        true
    }

    fn path_classes(&self) -> &'static [&'static str] {
        &["data", "control"]
    }

    fn stats(&self, _now: Time, out: &mut Vec<(String, f64)>) {
        out.push(("toy_delivered".into(), self.delivered as f64));
    }
}
