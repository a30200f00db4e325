//! Per-rank state of the event loop.

use crate::fabric::Time;
use fast_hash::FastMap;

const NONE: u32 = u32::MAX;

/// What a rank does when its next Resume event fires.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RState {
    /// Start the current row at the event time.
    Ready,
    /// Start step `step` of the running collective.
    CollStep,
    /// Blocked on requests (`pending` of them not yet known to complete).
    Blocked {
        pending: u32,
        latest: Time,
        any: bool,
    },
    /// The wait ended at the event time: finish the blocked operation.
    Woken,
    /// In a closed-form collective, waiting for the other members to enter it.
    Gathered,
    Done,
}

/// A running collective of one rank (its program, event by event).
#[derive(Debug)]
pub struct CollRun {
    pub prog: std::rc::Rc<crate::collectives::Program>,
    /// The next instruction.
    pub pc: usize,
    /// Global rank of each communicator rank.
    pub members: std::rc::Rc<[u32]>,
    pub comm: i32,
    pub inst: u64,
    /// Engine request slot of each program request posted so far.
    pub slots: Vec<u32>,
    /// The waitany window in progress (alltoall linear_sync with max_requests).
    pub window: Option<WindowRun>,
}

/// A running `Instr::Window`: the next receive and send to post, and the open requests
/// (slot, generation, is a receive).
#[derive(Debug, Default)]
pub struct WindowRun {
    pub next_recv: u32,
    pub next_send: u32,
    pub open: Vec<(u32, u32, bool)>,
}

/// One rank's state. With hundreds of ranks taking turns, an action's cost is mostly the
/// cache lines of its rank's state it touches, so the fields most actions use come first,
/// in this order (`repr(C)`), and the rest after them.
#[derive(Debug)]
#[repr(C)]
pub struct RankRt {
    pub job: u32,
    pub endpoint: u32,
    /// Rank within its job (transfers name it).
    pub local: u32,
    pub state: RState,
    /// Simulated start of the row being executed (the current row of `rows`).
    pub cur_start: Time,
    /// Iterations this rank is in whose spans are not yet folded into the trace's
    /// per-iteration latencies.
    pub spans: super::iterations::OpenSpans,
    /// Requests posted and not yet waited for, in post order (slot, generation).
    pub outstanding: Vec<(u32, u32)>,
    /// Trace request id → (request slot, generation).
    pub reqmap: ReqMap,
    /// Buffered rows (the current one first; its own hot fields lead).
    pub rows: super::rows::RankRows,
    /// Collective calls made so far per communicator (the instance number of the next).
    pub coll_count: Vec<(i32, u64)>,
    /// The last collective call without count lists, to skip the decision on repeated calls.
    pub memo: Option<CollMemo>,
    /// Requests the current blocking operation waits on.
    pub waiting: Vec<u32>,
    pub coll: Option<CollRun>,
    pub finish: Time,
}

/// Arguments of a collective call and what they led to.
#[derive(Debug, Clone)]
pub struct CollMemo {
    pub args: (u8, i32, i32, i64, i64, i32, i32),
    pub path: CollPath,
    pub members: std::rc::Rc<[u32]>,
    pub me: u32,
}

/// How a collective call is evaluated: in closed form, or by running this rank's program.
#[derive(Debug, Clone)]
pub enum CollPath {
    ClosedForm {
        shape: super::plan::ShapeKey,
        plan: std::rc::Rc<super::plan::Plan>,
    },
    Program(std::rc::Rc<crate::collectives::Program>),
}

/// Trace request id → (request slot, generation). Ids in a window of `WINDOW` ids index a
/// vector: small ids (most traces reuse a few), and ids numbered in increasing order (a
/// SimGrid TiT trace gives every request a new id), for which the window slides forward,
/// moving its live entries that fall behind to a hash map. Other ids (negative, behind the
/// window) go to the map.
#[derive(Debug, Default)]
pub struct ReqMap {
    /// The window's first id: `window[i]` is id `base + i`.
    base: i64,
    window: Vec<(u32, u32)>,
    /// Ids outside the window (all below `base`).
    big: FastMap<i64, (u32, u32)>,
}

const WINDOW: usize = 4096;

impl ReqMap {
    /// `id`'s index in the window, unless it is behind the window.
    #[inline]
    fn index(&self, id: i64) -> Option<usize> {
        // No overflow: base >= 0.
        (id >= self.base).then(|| (id - self.base) as usize)
    }

    #[inline]
    pub fn insert(&mut self, id: i64, v: (u32, u32)) {
        // An id the window holds or the next one after it (the usual cases) inlines into
        // the caller; sliding the window, or the map, is a call.
        match self.index(id) {
            Some(i) if i < self.window.len() => self.window[i] = v,
            Some(i) if i == self.window.len() && i < WINDOW => self.window.push(v),
            _ => self.insert_uncovered(id, v),
        }
    }

    /// An id the window does not hold yet: the window grows or slides to it, or the id
    /// (behind the window) goes to the map.
    #[inline(never)]
    fn insert_uncovered(&mut self, id: i64, v: (u32, u32)) {
        let Some(mut i) = self.index(id) else {
            self.big.insert(id, v);
            return;
        };
        if i >= WINDOW {
            // By half a window at least, so that each entry moves at most twice.
            let shift = (i + 1 - WINDOW).max(WINDOW / 2);
            let gone = shift.min(self.window.len());
            for (k, &e) in self.window[..gone].iter().enumerate() {
                if e.0 != NONE {
                    self.big.insert(self.base + k as i64, e);
                }
            }
            self.window.drain(..gone);
            self.base += shift as i64;
            i -= shift;
        }
        if self.window.len() <= i {
            self.window.resize(i + 1, (NONE, 0));
        }
        self.window[i] = v;
    }

    pub fn remove(&mut self, id: &i64) -> Option<(u32, u32)> {
        match self.index(*id) {
            Some(i) => {
                let slot = self.window.get_mut(i)?;
                let v = std::mem::replace(slot, (NONE, 0));
                (v.0 != NONE).then_some(v)
            }
            None => self.big.remove(id),
        }
    }
}

impl RankRt {
    pub fn new(job: u32, local: u32, endpoint: u32) -> Self {
        Self {
            job,
            local,
            endpoint,
            rows: Default::default(),
            state: RState::Ready,
            cur_start: 0.0,
            spans: Default::default(),
            reqmap: ReqMap::default(),
            memo: None,
            outstanding: Vec::new(),
            waiting: Vec::new(),
            coll_count: Vec::new(),
            coll: None,
            finish: 0.0,
        }
    }

    /// The instance number of this rank's next collective on `comm` (and counts it).
    pub fn next_instance(&mut self, comm: i32) -> u64 {
        if let Some(e) = self.coll_count.iter_mut().find(|e| e.0 == comm) {
            e.1 += 1;
            return e.1;
        }
        self.coll_count.push((comm, 0));
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prng::SplitMix64;
    use std::collections::HashMap;

    /// Random inserts and removals of rising, small, far and negative ids against a map.
    #[test]
    fn req_map_behaves_as_a_map_while_its_window_slides() {
        let mut rng = SplitMix64::new(11);
        let mut m = ReqMap::default();
        let mut model: HashMap<i64, (u32, u32)> = HashMap::new();
        let mut next = 0i64;
        for step in 0..200_000u32 {
            let id = match rng.below(8) {
                0 => rng.below(64) as i64,
                1 => -(rng.below(16) as i64) - 1,
                2 => next - rng.below(20_000) as i64,
                3 => next + rng.below(3 * WINDOW as u64) as i64,
                _ => {
                    next += 1;
                    next
                }
            };
            if rng.below(2) == 0 {
                m.insert(id, (step, step / 2));
                model.insert(id, (step, step / 2));
            } else {
                assert_eq!(m.remove(&id), model.remove(&id), "id {id}");
            }
        }
        for (id, v) in model {
            assert_eq!(m.remove(&id), Some(v), "id {id}");
        }
    }
}
