//! Per-rank state of the event loop.

use crate::fabric::Time;
use crate::hash::FastMap;

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

/// Trace request id → (request slot, generation). Ids are small integers in most traces:
/// those index a vector; others go to a hash map.
#[derive(Debug, Default)]
pub struct ReqMap {
    small: Vec<(u32, u32)>,
    big: FastMap<i64, (u32, u32)>,
}

const SMALL_IDS: i64 = 4096;

impl ReqMap {
    #[inline]
    pub fn insert(&mut self, id: i64, v: (u32, u32)) {
        // An id seen before (the usual case: traces reuse a few ids) inlines into the
        // caller; growing the vector or the map is a call.
        match usize::try_from(id).ok().and_then(|i| self.small.get_mut(i)) {
            Some(slot) => *slot = v,
            None => self.insert_uncovered(id, v),
        }
    }

    /// An id the vector does not cover yet: it grows, or the id goes to the map.
    #[inline(never)]
    fn insert_uncovered(&mut self, id: i64, v: (u32, u32)) {
        if (0..SMALL_IDS).contains(&id) {
            let i = id as usize;
            if self.small.len() <= i {
                self.small.resize(i + 1, (NONE, 0));
            }
            self.small[i] = v;
        } else {
            self.big.insert(id, v);
        }
    }

    pub fn remove(&mut self, id: &i64) -> Option<(u32, u32)> {
        if (0..SMALL_IDS).contains(id) {
            let slot = self.small.get_mut(*id as usize)?;
            let v = std::mem::replace(slot, (NONE, 0));
            (v.0 != NONE).then_some(v)
        } else {
            self.big.remove(id)
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
