//! Shared by the engine's integration tests: fabrics from the bundled TOML files or from pairs,
//! switched to packet contention, and a driver that advances a fabric between submits.
#![allow(dead_code)] // each test crate uses part of it

use std::collections::BTreeMap;

use replay_engine::fabric::schema::Value;
use replay_engine::fabric::{Delivery, Fabric, Kind, Transfer};
use replay_engine::FabricSpec;

/// A TOML document as the configuration value tree Python would hand over.
pub fn from_toml(v: &toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::Str(s.clone()),
        toml::Value::Integer(i) => Value::Int(*i),
        toml::Value::Float(f) => Value::Float(*f),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Array(a) => Value::List(a.iter().map(from_toml).collect()),
        toml::Value::Table(t) => Value::table(t.iter().map(|(k, v)| (k.clone(), from_toml(v)))),
        toml::Value::Datetime(d) => Value::Str(d.to_string()),
    }
}

/// A bundled fabric file (src/tailcast/replay/fabrics/NAME.toml) as a table.
pub fn bundled(name: &str) -> BTreeMap<String, Value> {
    let path = format!(
        "{}/../../src/tailcast/replay/fabrics/{name}.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let doc: toml::Value = toml::from_str(&text).expect("valid TOML");
    match from_toml(&doc) {
        Value::Table(t) => t,
        _ => unreachable!("a TOML document is a table"),
    }
}

/// A flow-level crossbar of `endpoints` ports at 8 Gb/s (1 byte per ns) with no hop
/// latency: queueing is all a test of it sees.
pub fn crossbar(endpoints: u32) -> BTreeMap<String, Value> {
    let table = [
        ("model", Value::from("flow")),
        ("link_bandwidth_gbps", Value::from(8.0)),
        ("hop_latency_ns", Value::from(0.0)),
        (
            "topology",
            Value::table([
                ("kind", Value::from("crossbar")),
                ("endpoints", Value::Int(i64::from(endpoints))),
            ]),
        ),
    ];
    table.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// `table` with `contention = "packet"` and the given `[packet]` keys.
pub fn packet(mut table: BTreeMap<String, Value>, keys: &[(&str, Value)]) -> Value {
    table.insert("contention".into(), Value::from("packet"));
    table.insert(
        "packet".into(),
        Value::table(keys.iter().map(|(k, v)| (k.to_string(), v.clone()))),
    );
    Value::Table(table)
}

pub fn build(v: &Value, seed: u64) -> Box<dyn Fabric> {
    FabricSpec::parse(v)
        .expect("valid fabric")
        .build(seed)
        .expect("builds")
        .fabric
}

/// Submits one eager transfer now and runs the fabric until it is delivered.
pub fn deliver_alone(f: &mut dyn Fabric, now: f64, src: u32, dst: u32, bytes: u64) -> Delivery {
    assert!(f
        .submit(now, &Transfer::new(0, src, dst, bytes, Kind::Eager))
        .eq(&replay_engine::fabric::Submitted::Later));
    let mut out = Vec::new();
    while let Some(t) = f.next_time() {
        f.advance(t, &mut out);
    }
    assert_eq!(out.len(), 1);
    out[0]
}
