//! Each rank's CPU in the engine. Two parts of the host model act on it (fabric/host.rs):
//! - detours (fabric/host/noise.rs has the model): CPU work a rank does is stretched by
//!   them, and a rank coming back from a wait during one continues at its end;
//! - `overheads_occupy_cpu`: the work occupies the rank's CPU, so message overheads and
//!   compute of one rank run one after another (LogGP's o: "the processor cannot perform
//!   other operations" meanwhile, Alexandrov et al. 1995 §2), each in the first free gap
//!   from when it can start. Gaps rather than a single "free from" time because the
//!   engine learns some receives' completions ahead of simulated time, and a later-learned
//!   send at the present must still run before them.
//!
//! With both, work placed in a gap ahead of a rank's latest instant that was then stretched
//! by detours sees only the detours its timeline still holds (it drops those that ended
//! before the latest instant it was asked about: noise.rs).
//!
//! With neither, the engine holds no `HostCpu` and each place asks one `Option` (the
//! replay is then what it was without the model).

use crate::fabric::host::noise::{HostNoise, Timeline};
use crate::fabric::host::HostParams;
use crate::fabric::Time;

/// Detours and CPU occupancy of every rank.
pub(super) struct HostCpu {
    noise: Option<(HostNoise, Vec<Timeline>)>,
    /// Per rank, the intervals its CPU is reserved for, sorted and disjoint (None: work
    /// does not occupy the CPU).
    busy: Option<Vec<Vec<(Time, Time)>>>,
}

impl HostCpu {
    /// None when the host model leaves the CPU alone; noise timelines drawn from streams
    /// derived from `seed`.
    pub fn new(host: &HostParams, ranks: usize, seed: u64) -> Option<Box<Self>> {
        let noise = host.noise.clone().map(|model| {
            let timelines = (0..ranks as u32)
                .map(|r| Timeline::new(&model, seed, r))
                .collect();
            (model, timelines)
        });
        let busy = host.overheads_occupy_cpu.then(|| vec![Vec::new(); ranks]);
        (noise.is_some() || busy.is_some()).then(|| Box::new(Self { noise, busy }))
    }

    /// Whether work occupies the CPU (`overheads_occupy_cpu`).
    pub fn occupies_cpu(&self) -> bool {
        self.busy.is_some()
    }

    /// When `work` ns of CPU work rank `r` can begin at `t` end (`now`: the engine's
    /// present, before which nothing is reserved any more).
    #[inline]
    pub fn work(&mut self, r: u32, t: Time, work: Time, now: Time) -> Time {
        let Some(busy) = self.busy.as_mut() else {
            return stretched(&mut self.noise, r, t, work);
        };
        if work <= 0.0 {
            return t;
        }
        let list = &mut busy[r as usize];
        let past = list.partition_point(|&(_, end)| end <= now);
        list.drain(..past);
        // Intervals are disjoint and sorted, so their ends are sorted too.
        let mut i = list.partition_point(|&(_, end)| end <= t);
        let mut start = t;
        let end = loop {
            let end = stretched(&mut self.noise, r, start, work);
            match list.get(i) {
                Some(&(a, b)) if a < end => {
                    start = start.max(b);
                    i += 1;
                }
                _ => break end,
            }
        };
        if i > 0 && list[i - 1].1 == start {
            list[i - 1].1 = end; // adjoining: keep the list short
        } else {
            list.insert(i, (start, end));
        }
        end
    }

    /// When rank `r`'s overhead `o` for a message it handles at `t` is done: occupying its
    /// CPU like other work when overheads do; otherwise `t + o`, not stretched by detours
    /// (these instants may lie ahead of the rank's own, which its noise timeline is asked
    /// in order of).
    #[inline]
    pub fn overhead(&mut self, r: u32, t: Time, o: Time, now: Time) -> Time {
        if self.busy.is_some() {
            self.work(r, t, o, now)
        } else {
            t + o
        }
    }

    /// Whether rank `r` has no detour over [`from`, `to`] and its CPU is not occupied
    /// (then every question about that span gets its nominal answer).
    #[inline]
    pub fn undisturbed(&mut self, r: u32, from: Time, to: Time) -> bool {
        if self.busy.is_some() {
            return false;
        }
        match self.noise.as_mut() {
            Some((model, ranks)) => ranks[r as usize].next_start_after(model, from) > to,
            None => true,
        }
    }

    /// When rank `r`, whose MPI call has what it waited for at `t`, runs again: after the
    /// CPU work reserved at `t` and a detour in progress then.
    #[inline]
    pub fn back(&mut self, r: u32, t: Time) -> Time {
        let mut t = t;
        if let Some(busy) = self.busy.as_ref() {
            let list = &busy[r as usize];
            let i = list.partition_point(|&(_, end)| end <= t);
            if let Some(&(a, b)) = list.get(i) {
                if a <= t {
                    t = b;
                }
            }
        }
        match self.noise.as_mut() {
            Some((model, ranks)) if model.during_waits => ranks[r as usize].running_at(model, t),
            _ => t,
        }
    }
}

/// When `work` ns of CPU work from `t` end on rank `r`, stretched by its detours.
#[inline]
fn stretched(noise: &mut Option<(HostNoise, Vec<Timeline>)>, r: u32, t: Time, work: Time) -> Time {
    match noise {
        Some((model, ranks)) => ranks[r as usize].work(model, t, work),
        None => t + work,
    }
}
