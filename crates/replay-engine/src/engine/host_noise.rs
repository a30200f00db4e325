//! Host noise in the engine: each rank's detours (fabric/host/noise.rs has the model) and
//! where they act — CPU work a rank does is stretched by them, and a rank coming back from
//! a wait during one continues at its end (`Engine::cpu_work` and `cpu_back`, execute.rs).
//! With noise off the engine holds none, and each place asks one `Option` (the replay is
//! then what it was without the model).

use crate::fabric::host::noise::{HostNoise, Timeline};
use crate::fabric::Time;

/// The noise model and every rank's detours.
pub(super) struct RankNoise {
    model: HostNoise,
    ranks: Vec<Timeline>,
}

impl RankNoise {
    /// One timeline per global rank, drawn from streams derived from `seed`.
    pub fn new(model: HostNoise, ranks: usize, seed: u64) -> Self {
        let ranks = (0..ranks as u32)
            .map(|r| Timeline::new(&model, seed, r))
            .collect();
        Self { model, ranks }
    }

    /// When `work` ns of CPU work rank `r` begins at `t` end.
    #[inline]
    pub fn work(&mut self, r: u32, t: Time, work: Time) -> Time {
        self.ranks[r as usize].work(&self.model, t, work)
    }

    /// When rank `r`, whose MPI call has what it waited for at `t`, runs again: at the end
    /// of a detour in progress then (when the model says detours act during waits).
    #[inline]
    pub fn back(&mut self, r: u32, t: Time) -> Time {
        if self.model.during_waits {
            self.ranks[r as usize].running_at(&self.model, t)
        } else {
            t
        }
    }
}
