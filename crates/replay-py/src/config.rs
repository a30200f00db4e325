//! Conversion of the flat, typed configuration Python builds (from fabric TOML, already
//! validated there with file/key names) into engine structs. Unknown keys are errors too.

use std::collections::HashMap;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use replay_engine::config::{
    Duplex, FabricConfig, FabricSpec, FlowParams, HostParams, LogGpParams, Placement, Routing,
    Topology,
};

#[derive(Debug, Clone, FromPyObject)]
enum Value {
    Int(i64),
    Float(f64),
    Str(String),
}

struct Flat(HashMap<String, Value>);

impl Flat {
    fn take_f64(&mut self, key: &str) -> PyResult<Option<f64>> {
        match self.0.remove(key) {
            None => Ok(None),
            Some(Value::Int(i)) => Ok(Some(i as f64)),
            Some(Value::Float(f)) => Ok(Some(f)),
            Some(Value::Str(_)) => Err(PyValueError::new_err(format!(
                "fabric key {key}: expected a number"
            ))),
        }
    }

    fn need_f64(&mut self, key: &str) -> PyResult<f64> {
        self.take_f64(key)?
            .ok_or_else(|| PyValueError::new_err(format!("fabric key {key} is required")))
    }

    fn need_u32(&mut self, key: &str) -> PyResult<u32> {
        match self.0.remove(key) {
            Some(Value::Int(i)) if (0..=i64::from(u32::MAX)).contains(&i) => Ok(i as u32),
            Some(_) => Err(PyValueError::new_err(format!(
                "fabric key {key}: expected an integer >= 0"
            ))),
            None => Err(PyValueError::new_err(format!(
                "fabric key {key} is required"
            ))),
        }
    }

    fn take_str(&mut self, key: &str, default: &str) -> PyResult<String> {
        match self.0.remove(key) {
            None => Ok(default.to_string()),
            Some(Value::Str(s)) => Ok(s),
            Some(_) => Err(PyValueError::new_err(format!(
                "fabric key {key}: expected a string"
            ))),
        }
    }
}

fn bad(key: &str, value: &str, allowed: &str) -> PyErr {
    PyValueError::new_err(format!(
        "fabric key {key}: {value:?} is not one of {allowed}"
    ))
}

/// Builds a FabricSpec from the flat dict (see tailcast/_core.pyi `replay` for the keys).
pub fn fabric_spec(dict: &Bound<'_, PyDict>) -> PyResult<FabricSpec> {
    let mut flat = Flat(dict.extract()?);
    let host = HostParams {
        overhead_ns: flat.take_f64("overhead_ns")?.unwrap_or(0.0),
        overhead_ns_per_byte: flat.take_f64("overhead_ns_per_byte")?.unwrap_or(0.0),
        gamma_ns_per_byte: flat.take_f64("gamma_ns_per_byte")?.unwrap_or(0.0),
        handshake: true,
    };
    let model = flat.take_str("model", "")?;
    let spec = match model.as_str() {
        "alpha_beta" => FabricSpec {
            fabric: FabricConfig::LogGp(LogGpParams::AlphaBeta {
                alpha_ns: flat.need_f64("alpha_ns")?,
                beta_ns_per_byte: flat.need_f64("beta_ns_per_byte")?,
            }),
            host: HostParams {
                handshake: false,
                ..host
            },
        },
        "loggp" => FabricSpec {
            fabric: FabricConfig::LogGp(LogGpParams::LogGp {
                l_ns: flat.need_f64("latency_ns")?,
                g_ns: flat.take_f64("gap_ns")?.unwrap_or(0.0),
                g_ns_per_byte: flat.take_f64("gap_ns_per_byte")?.unwrap_or(0.0),
            }),
            host,
        },
        "flow" => {
            let kind = flat.take_str("topology", "")?;
            let topology = match kind.as_str() {
                "crossbar" => Topology::Crossbar {
                    endpoints: flat.need_u32("endpoints")?,
                },
                "fat_tree" => Topology::FatTree {
                    k: flat.need_u32("k")?,
                    n: flat.need_u32("n")?,
                },
                "torus3d" => Topology::Torus3d {
                    x: flat.need_u32("x")?,
                    y: flat.need_u32("y")?,
                    z: flat.need_u32("z")?,
                },
                other => return Err(bad("topology", other, "crossbar, fat_tree, torus3d")),
            };
            let duplex = match flat.take_str("duplex", "full")?.as_str() {
                "full" => Duplex::Full,
                "half" => Duplex::Half,
                other => return Err(bad("duplex", other, "full, half")),
            };
            let routing = match flat.take_str("routing", "dmodk")?.as_str() {
                "dmodk" => Routing::DModK,
                "random" => Routing::Random,
                other => return Err(bad("routing", other, "dmodk, random")),
            };
            FabricSpec {
                fabric: FabricConfig::Flow(FlowParams {
                    topology,
                    link_bandwidth_gbps: flat.need_f64("link_bandwidth_gbps")?,
                    hop_latency_ns: flat.take_f64("hop_latency_ns")?.unwrap_or(0.0),
                    duplex,
                    routing,
                }),
                host,
            }
        }
        other => return Err(bad("model", other, "alpha_beta, loggp, flow")),
    };
    if let Some(key) = flat.0.keys().min() {
        return Err(PyValueError::new_err(format!(
            "fabric key {key} is not used by model {model}"
        )));
    }
    Ok(spec)
}

/// "linear", "linear:OFFSET", "random:SEED", "explicit:E0,E1,…".
pub fn placement(text: &str) -> PyResult<Placement> {
    let (kind, arg) = text.split_once(':').unwrap_or((text, ""));
    let num = |s: &str| {
        s.trim().parse::<u64>().map_err(|_| {
            PyValueError::new_err(format!("placement {text:?}: {s:?} is not an integer"))
        })
    };
    match kind {
        "linear" if arg.is_empty() => Ok(Placement::Linear { offset: 0 }),
        "linear" => Ok(Placement::Linear {
            offset: num(arg)? as u32,
        }),
        "random" if arg.is_empty() => Ok(Placement::Random { seed: 0 }),
        "random" => Ok(Placement::Random { seed: num(arg)? }),
        "explicit" => {
            let list: PyResult<Vec<u32>> =
                arg.split(',').map(|s| num(s).map(|v| v as u32)).collect();
            Ok(Placement::Explicit(list?))
        }
        _ => Err(PyValueError::new_err(format!(
            "placement {text:?}: expected linear[:OFFSET], random[:SEED] or explicit:E0,E1,…"
        ))),
    }
}
