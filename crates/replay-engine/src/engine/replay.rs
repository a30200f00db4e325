//! The in-memory driver: whole traces given as columns, fed to the engine in small chunks
//! as it asks for them, simulated times written per trace row.

use super::core::{Engine, Progress};
use super::feed::ReplayOutput;
use super::jobs::JobSetup;
use super::output::Output;
use super::rows::Chunk;
use crate::config::Generator;
use crate::config::{Placement, ReplayOptions};
use crate::error::ReplayError;
use crate::fabric::registry::FabricSpec;
use crate::scenario::{JobDecl, JobPlace, Scenario};
use crate::trace::{self, TraceColumns};

/// One trace to replay, where its ranks sit, and whether the replay waits for it.
#[derive(Debug, Clone)]
pub struct JobInput<'a> {
    pub columns: TraceColumns<'a>,
    pub placement: Placement,
    /// Background traces are cut off when every foreground trace finished.
    pub foreground: bool,
}

/// Rows of one rank copied into the engine at a time (see `replay`).
pub fn engine_chunk_rows(total_ranks: usize) -> usize {
    ((1usize << 14) / total_ranks.max(1)).clamp(16, 1 << 16)
}

/// Replays in-memory traces together on one fabric, with background generators already
/// on their endpoints (tests and examples; `replay_scenario` is the general form).
pub fn replay(
    jobs: &[JobInput<'_>],
    generators: Vec<Generator>,
    spec: &FabricSpec,
    options: &ReplayOptions,
) -> Result<ReplayOutput, ReplayError> {
    replay_interruptible(jobs, generators, spec, options, &mut |_| false)
}

/// `replay`, interruptible as `replay_scenario` is.
pub fn replay_interruptible(
    jobs: &[JobInput<'_>],
    generators: Vec<Generator>,
    spec: &FabricSpec,
    options: &ReplayOptions,
    interrupted: &mut dyn FnMut(u64) -> bool,
) -> Result<ReplayOutput, ReplayError> {
    let decls = jobs
        .iter()
        .map(|j| JobDecl {
            at: JobPlace::Placement(j.placement.clone()),
            foreground: j.foreground,
        })
        .collect();
    let scenario = Scenario::of(spec, options, decls, generators);
    let traces: Vec<TraceColumns<'_>> = jobs.iter().map(|j| j.columns).collect();
    replay_scenario(&scenario, &traces, interrupted)
}

/// Replays `scenario` with its traces given whole (`traces[j]` is its job `j`), asking
/// `interrupted` between pieces of work (each time a rank's next rows are copied in: every
/// ~16 K rows over all ranks); when it answers true the replay stops with
/// `ReplayError::Interrupted` and nothing of it is returned. The caller decides what an
/// interruption is (the Python binding polls for signals) and how often it looks.
/// `interrupted` is told how many rows of the foreground traces have been handed to the
/// engine so far (at most ~16 K ahead of the rows it has run), so the caller can also show
/// how far the replay is.
pub fn replay_scenario(
    scenario: &Scenario,
    traces: &[TraceColumns<'_>],
    interrupted: &mut dyn FnMut(u64) -> bool,
) -> Result<ReplayOutput, ReplayError> {
    if traces.len() != scenario.jobs.len() {
        return Err(ReplayError::BadConfig(format!(
            "{} traces for {} declared jobs",
            traces.len(),
            scenario.jobs.len()
        )));
    }
    let mut indexes = Vec::with_capacity(traces.len());
    let mut setups = Vec::with_capacity(traces.len());
    for (j, columns) in traces.iter().enumerate() {
        let index = trace::index(j as u32, columns)?;
        let n = columns.len();
        setups.push(JobSetup {
            ranks: index.ranks,
            comms: index.comms.clone(),
            output: Output::Rows {
                start: crate::bigvec::zeroed_f64(n),
                end: crate::bigvec::zeroed_f64(n),
            },
        });
        indexes.push(index);
    }
    let mut engine = Engine::new(setups, scenario)?;
    let mut cursor: Vec<Vec<usize>> = indexes
        .iter()
        .map(|ix| ix.starts[..ix.ranks as usize].to_vec())
        .collect();
    let total_ranks: usize = indexes.iter().map(|ix| ix.ranks as usize).sum();
    // Small copies: ~16 K rows (~1.2 MB) buffered over all ranks, copied shortly before
    // they run, so they are still in cache when they do (1 M rows ran 1.5x slower on the
    // halo benchmark; 4 K loses to the pauses).
    let chunk_rows = engine_chunk_rows(total_ranks);
    let mut foreground_fed = 0u64;
    while let Progress::NeedInput { job, rank } = engine.run()? {
        if interrupted(foreground_fed) {
            return Err(ReplayError::Interrupted);
        }
        let (j, r) = (job as usize, rank as usize);
        let ix = &indexes[j];
        let (from, to) = (cursor[j][r], ix.starts[r + 1]);
        let take = (to - from).min(chunk_rows);
        let columns = &traces[j];
        let chunk = if ix.order.is_empty() {
            let reuse = engine.take_spare(job, rank);
            Chunk::gather_range(reuse, columns, from, from + take, from as u64)
        } else {
            let rows = ix.order[from..from + take].iter();
            Chunk::gather(columns, rows.map(|&i| (i as usize, u64::from(i))))
        };
        engine.feed(job, rank, chunk);
        if scenario.jobs[j].foreground {
            foreground_fed += take as u64;
        }
        cursor[j][r] += take;
        if cursor[j][r] == to {
            engine.close(job, rank);
        }
    }
    Ok(engine.finish())
}
