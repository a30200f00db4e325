//! Replay configuration from Python: the fabric table as Python's tomllib parsed it
//! (validated by the engine's schema, errors raised as `FabricConfigError` with the key),
//! placements, and background generators.

use std::collections::BTreeMap;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use replay_engine::fabric::registry::{self, FabricSpec};
use replay_engine::fabric::schema::{ConfigError, Value};
use replay_engine::scenario::Take;
use replay_engine::{Arrivals, LocalityClass, Pattern, Placement, Traffic};

pyo3::create_exception!(
    _core,
    FabricConfigError,
    PyValueError,
    "A fabric configuration that does not fit its model's parameters (`key`, `reason`)."
);

/// The exception for a configuration error, carrying the dotted key and the reason.
pub fn config_error(py: Python<'_>, e: &ConfigError) -> PyErr {
    let err = FabricConfigError::new_err(e.to_string());
    let value = err.value(py);
    let _ = value.setattr("key", e.key.clone());
    let _ = value.setattr("reason", e.message.clone());
    err
}

/// A Python value (from tomllib) as a configuration value; `path` names it in errors.
fn to_value(obj: &Bound<'_, PyAny>, path: &str) -> PyResult<Value> {
    // bool before int: Python's bool is an int.
    if let Ok(b) = obj.downcast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        return obj
            .extract::<i64>()
            .map(Value::Int)
            .map_err(|_| PyValueError::new_err(format!("key {path}: integer out of range")));
    }
    if let Ok(f) = obj.downcast::<PyFloat>() {
        return Ok(Value::Float(f.value()));
    }
    if let Ok(s) = obj.downcast::<PyString>() {
        return Ok(Value::Str(s.to_str()?.to_string()));
    }
    if let Ok(d) = obj.downcast::<PyDict>() {
        return to_table(d, path).map(Value::Table);
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for (i, item) in obj.try_iter()?.enumerate() {
            items.push(to_value(&item?, &format!("{path}[{i}]"))?);
        }
        return Ok(Value::List(items));
    }
    let kind = obj.get_type().name()?.to_string();
    Err(PyValueError::new_err(format!(
        "key {path}: a {kind} is not a fabric parameter value"
    )))
}

fn to_table(d: &Bound<'_, PyDict>, prefix: &str) -> PyResult<BTreeMap<String, Value>> {
    let mut out = BTreeMap::new();
    for (k, v) in d.iter() {
        let key: String = k
            .extract()
            .map_err(|_| PyTypeError::new_err("fabric table keys must be strings"))?;
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        out.insert(key, to_value(&v, &path)?);
    }
    Ok(out)
}

/// Validates a fabric table (a dict as tomllib returns it).
pub fn fabric_spec(py: Python<'_>, table: &Bound<'_, PyDict>) -> PyResult<FabricSpec> {
    let value = Value::Table(to_table(table, "")?);
    FabricSpec::parse(&value).map_err(|e| config_error(py, &e))
}

/// "linear", "linear:OFFSET", "random:SEED", "explicit:E0,E1,…",
/// "locality:CLASS:NODES[:SEED]" (CLASS = same_group | same_island | different_islands).
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
        "locality" => {
            let parts: Vec<&str> = arg.split(':').collect();
            let class = parts.first().and_then(|c| LocalityClass::parse(c));
            match (class, parts.len()) {
                (Some(class), 2 | 3) => Ok(Placement::Locality {
                    class,
                    nodes: num(parts[1])? as u32,
                    seed: parts.get(2).map(|s| num(s)).transpose()?.unwrap_or(0),
                }),
                _ => Err(PyValueError::new_err(format!(
                    "placement {text:?}: expected locality:same_group|same_island|different_islands:NODES[:SEED]"
                ))),
            }
        }
        _ => Err(PyValueError::new_err(format!(
            "placement {text:?}: expected linear[:OFFSET], random[:SEED], explicit:E0,E1,… or \
             locality:CLASS:NODES[:SEED]"
        ))),
    }
}

/// What a synthetic background job sends, as Python describes it (see tailcast/_core.pyi).
#[derive(FromPyObject)]
pub struct TrafficArg {
    #[pyo3(item)]
    pattern: String,
    #[pyo3(item)]
    bytes: u64,
    #[pyo3(item)]
    load: f64,
    #[pyo3(item)]
    arrivals: String,
    #[pyo3(item)]
    hot_fraction: f64,
}

impl TrafficArg {
    pub fn build(self) -> PyResult<Traffic> {
        let pattern = match self.pattern.as_str() {
            "uniform" => Pattern::Uniform,
            "nearest_neighbour" => Pattern::NearestNeighbour,
            "all_to_all" => Pattern::AllToAll,
            "permutation" => Pattern::Permutation,
            "hot_spot" => Pattern::HotSpot {
                fraction: self.hot_fraction,
            },
            other => {
                return Err(PyValueError::new_err(format!(
                    "background pattern {other:?}: expected uniform, nearest_neighbour, \
                     all_to_all, permutation or hot_spot"
                )))
            }
        };
        let arrivals = match self.arrivals.as_str() {
            "poisson" => Arrivals::Poisson,
            "periodic" => Arrivals::Periodic,
            other => {
                return Err(PyValueError::new_err(format!(
                    "background arrivals {other:?}: expected poisson or periodic"
                )))
            }
        };
        Ok(Traffic {
            pattern,
            bytes: self.bytes,
            load: self.load,
            arrivals,
        })
    }
}

/// "random", "linear" or "E0,E1,…": which free endpoints a background job takes.
pub fn take(text: &str) -> PyResult<Take> {
    match text {
        "random" => Ok(Take::Random),
        "linear" => Ok(Take::Linear),
        list => list
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| {
                s.trim().parse::<u32>().map_err(|_| {
                    PyValueError::new_err(format!(
                        "background placement {text:?}: expected random, linear or E0,E1,…"
                    ))
                })
            })
            .collect::<PyResult<Vec<u32>>>()
            .map(Take::Explicit),
    }
}

/// Every model's parameters, as `tailcast replay fabrics --describe` prints them.
#[pyfunction]
pub fn fabric_models(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    let mut out = Vec::new();
    for model in registry::models() {
        let d = PyDict::new(py);
        d.set_item("name", model.name)?;
        d.set_item("doc", model.doc)?;
        let mut params = Vec::new();
        for p in registry::describe(model) {
            let pd = PyDict::new(py);
            pd.set_item("key", p.key)?;
            pd.set_item("expected", p.expected)?;
            pd.set_item("default", p.default)?;
            pd.set_item("required", p.required)?;
            pd.set_item("doc", p.doc)?;
            params.push(pd);
        }
        d.set_item("params", params)?;
        out.push(d);
    }
    Ok(out)
}
