//! What one replay is, declared once: the fabric file (with its host model), the replay
//! options (seed, collective overrides, eager override, compute scale), where each trace's
//! ranks sit, and the background traffic around them — synthetic jobs of other users given
//! one by one or sized from a utilisation b (seed 001). The binding builds one from what
//! Python parsed; the engine builds the fabric once and places everything on it here: the
//! traces with a placement of their own first, then, on the endpoints left free, the
//! background traces, the given background jobs and the jobs sized from b.

mod pool;
mod sized_b;

use std::sync::Arc;

pub use pool::Take;
pub use sized_b::{SizedFromB, Spread};

use crate::config::{Generator, Placement, ReplayOptions, Traffic};
use crate::error::ReplayError;
use crate::fabric::registry::{CheckedFabric, FabricSpec};
use crate::fabric::Fabric;
use crate::placement::place;
use pool::EndpointPool;

#[derive(Debug, Clone)]
pub struct Scenario {
    pub fabric: Arc<CheckedFabric>,
    pub options: ReplayOptions,
    /// One per trace, in the order the traces are given.
    pub jobs: Vec<JobDecl>,
    pub generators: Vec<GeneratorDecl>,
    pub sized_from_b: Option<BackgroundB>,
}

/// Where one trace sits, and whether the replay waits for it.
#[derive(Debug, Clone, PartialEq)]
pub struct JobDecl {
    pub at: JobPlace,
    /// Background traces are cut off when every foreground trace finished.
    pub foreground: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum JobPlace {
    /// A placement of its own (`placement.rs`).
    Placement(Placement),
    /// Endpoints no earlier job took.
    Free(Take),
}

/// A synthetic background job given by the user.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratorDecl {
    pub traffic: Traffic,
    pub nodes: u32,
    pub take: Take,
}

/// Background jobs sized from b, all sending the same traffic.
#[derive(Debug, Clone, PartialEq)]
pub struct BackgroundB {
    pub sizing: SizedFromB,
    pub traffic: Traffic,
}

/// Where everything of a scenario sits on its fabric.
#[derive(Debug, Clone, PartialEq)]
pub struct Placed {
    /// The endpoint of every rank, per trace.
    pub jobs: Vec<Vec<u32>>,
    /// Given background jobs, then those sized from b.
    pub generators: Vec<Generator>,
}

impl Scenario {
    /// A scenario of traces placed as `jobs` say and background jobs already on their
    /// endpoints (tests and examples).
    pub fn of(
        fabric: &FabricSpec,
        options: &ReplayOptions,
        jobs: Vec<JobDecl>,
        generators: Vec<Generator>,
    ) -> Self {
        let generators = generators
            .into_iter()
            .map(|g| GeneratorDecl {
                traffic: g.traffic,
                nodes: g.endpoints.len() as u32,
                take: Take::Explicit(g.endpoints),
            })
            .collect();
        Self {
            fabric: Arc::new(CheckedFabric::unchecked(fabric.clone())),
            options: options.clone(),
            jobs,
            generators,
            sized_from_b: None,
        }
    }

    /// Places the traces (`ranks[j]` ranks each) and the background on `fabric`, built
    /// from this scenario's fabric spec.
    pub fn place(&self, fabric: &dyn Fabric, ranks: &[u32]) -> Result<Placed, ReplayError> {
        assert_eq!(
            ranks.len(),
            self.jobs.len(),
            "one rank count per declared trace"
        );
        let mut jobs = vec![Vec::new(); self.jobs.len()];
        let mut foreground = Vec::new();
        for (j, decl) in self.jobs.iter().enumerate() {
            if let JobPlace::Placement(p) = &decl.at {
                let locality = |e| fabric.locality(e);
                jobs[j] = place(ranks[j], fabric.endpoints(), &locality, p)
                    .map_err(|m| ReplayError::Placement(format!("trace {j}: {m}")))?;
                foreground.extend_from_slice(&jobs[j]);
            }
        }
        let mut pool = EndpointPool::new(fabric.endpoints(), &foreground, self.options.seed);
        let background = ReplayError::Placement;
        for (j, decl) in self.jobs.iter().enumerate() {
            if let JobPlace::Free(take) = &decl.at {
                let what = format!("background trace {j}");
                jobs[j] = pool.take(ranks[j], take, &what).map_err(background)?;
            }
        }
        let mut generators = Vec::new();
        for (g, decl) in self.generators.iter().enumerate() {
            let what = format!("background job {g}");
            let endpoints = pool
                .take(decl.nodes, &decl.take, &what)
                .map_err(background)?;
            generators.push(Generator {
                traffic: decl.traffic,
                endpoints,
            });
        }
        if let Some(b) = &self.sized_from_b {
            let model = self.fabric.spec.model.name;
            let sized = b
                .sizing
                .jobs(fabric, model, &foreground, &pool, self.options.seed)
                .map_err(background)?;
            for endpoints in sized {
                let take = Take::Explicit(endpoints.clone());
                pool.take(endpoints.len() as u32, &take, "background sized from b")
                    .map_err(background)?;
                generators.push(Generator {
                    traffic: b.traffic,
                    endpoints,
                });
            }
        }
        Ok(Placed { jobs, generators })
    }
}
