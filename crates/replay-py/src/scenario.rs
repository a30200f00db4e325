//! `tailcast._core.FabricSpec` (a fabric table validated once) and `tailcast._core.Scenario`
//! (what one replay is: replay_engine::scenario::Scenario), built from what Python parsed.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use replay_engine::fabric::registry;
use replay_engine::scenario::{
    self, BackgroundB, GeneratorDecl, JobDecl, JobPlace, SizedFromB, Spread,
};
use replay_engine::ReplayOptions;

use crate::config::{self, TrafficArg};

/// A fabric table checked against its model's declaration and by building it, once; the
/// build is kept for the first replay (registry::CheckedFabric).
#[pyclass(frozen, module = "tailcast._core")]
pub struct FabricSpec {
    pub(crate) inner: Arc<registry::CheckedFabric>,
}

#[pymethods]
impl FabricSpec {
    #[new]
    fn new(py: Python<'_>, table: Bound<'_, PyDict>) -> PyResult<Self> {
        let spec = config::fabric_spec(py, &table)?;
        // Seed 0, every replay's default: the replay of a command without --seed takes it.
        let checked =
            registry::CheckedFabric::check(spec, 0).map_err(|e| config::config_error(py, &e))?;
        Ok(Self {
            inner: Arc::new(checked),
        })
    }

    #[getter]
    fn model(&self) -> &'static str {
        self.inner.spec.model.name
    }

    /// The fabric's layout (from the kept build): endpoint count (None: unbounded), each
    /// endpoint's group and island (None where the model has none), path class names.
    fn layout<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        type Located = Option<Vec<(u32, u32)>>;
        let (endpoints, classes, located): (Option<u32>, Vec<&'static str>, Located) = self
            .inner
            .read(|built| {
                let f = &built.fabric;
                let endpoints = f.endpoints();
                let located = endpoints.and_then(|n| {
                    (0..n)
                        .map(|e| f.locality(e).map(|l| (l.group, l.island)))
                        .collect()
                });
                (endpoints, f.path_classes().to_vec(), located)
            })
            .map_err(|e| config::config_error(py, &e))?;
        let out = PyDict::new(py);
        out.set_item("endpoints", endpoints)?;
        out.set_item("model", self.inner.spec.model.name)?;
        out.set_item("path_classes", classes)?;
        let (group, island) = match located {
            Some(v) => (
                Some(v.iter().map(|x| x.0).collect::<Vec<_>>()),
                Some(v.iter().map(|x| x.1).collect::<Vec<_>>()),
            ),
            None => (None, None),
        };
        out.set_item("group", group)?;
        out.set_item("island", island)?;
        Ok(out)
    }
}

/// Background jobs sized from b, as Python describes them (see tailcast/_core.pyi).
#[derive(FromPyObject)]
pub struct SizedArg {
    #[pyo3(item)]
    b: f64,
    #[pyo3(item)]
    job_sizes: Vec<u32>,
    #[pyo3(item)]
    placement: String,
    #[pyo3(item)]
    traffic: TrafficArg,
}

/// A synthetic background job: its traffic, node count and which endpoints it takes.
#[derive(FromPyObject)]
pub struct GeneratorArg {
    #[pyo3(item)]
    nodes: u32,
    #[pyo3(item)]
    placement: String,
    #[pyo3(item)]
    traffic: TrafficArg,
}

/// What one replay is (see replay_engine::scenario).
#[pyclass(frozen, module = "tailcast._core")]
pub struct Scenario {
    pub(crate) inner: scenario::Scenario,
}

#[pymethods]
impl Scenario {
    #[new]
    #[pyo3(signature = (fabric, placement, *, seed = 0, eager_threshold_bytes = None,
                        compute_scale = 1.0, coll = "", record_messages = None,
                        background_traces = vec![], generators = vec![], sized_from_b = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        fabric: &FabricSpec,
        placement: &str,
        seed: u64,
        eager_threshold_bytes: Option<u64>,
        compute_scale: f64,
        coll: &str,
        record_messages: Option<bool>,
        background_traces: Vec<String>,
        generators: Vec<GeneratorArg>,
        sized_from_b: Option<SizedArg>,
    ) -> PyResult<Self> {
        let mut jobs = vec![JobDecl {
            at: JobPlace::Placement(config::placement(placement)?),
            foreground: true,
        }];
        for text in &background_traces {
            jobs.push(JobDecl {
                at: JobPlace::Free(config::take(text)?),
                foreground: false,
            });
        }
        let generators = generators
            .into_iter()
            .map(|g| {
                Ok(GeneratorDecl {
                    traffic: g.traffic.build()?,
                    nodes: g.nodes,
                    take: config::take(&g.placement)?,
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        let sized_from_b = sized_from_b
            .map(|s| {
                let spread = match s.placement.as_str() {
                    "scattered" => Spread::Scattered,
                    "around" => Spread::Around,
                    other => {
                        return Err(pyo3::exceptions::PyValueError::new_err(format!(
                            "background placement {other:?}: expected scattered or around"
                        )))
                    }
                };
                Ok(BackgroundB {
                    sizing: SizedFromB {
                        b: s.b,
                        job_sizes: s.job_sizes,
                        spread,
                    },
                    traffic: s.traffic.build()?,
                })
            })
            .transpose()?;
        let options = ReplayOptions {
            eager_threshold_bytes,
            compute_scale,
            seed,
            coll_overrides: coll.to_string(),
            closed_form_collectives: true,
            record_messages,
        };
        Ok(Self {
            inner: scenario::Scenario {
                fabric: Arc::clone(&fabric.inner),
                options,
                jobs,
                generators,
                sized_from_b,
            },
        })
    }
}

/// (fabric tables validated, fabrics built) so far in this process.
#[pyfunction]
pub fn fabric_work() -> (u64, u64) {
    registry::fabric_work()
}
