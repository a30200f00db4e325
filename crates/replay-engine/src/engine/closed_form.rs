//! Closed-form collectives in the event loop (see plan/). Members entering an instance
//! wait ("gather") until the last one enters; then the plan gives every member's exit time
//! at once and each resumes then. Used only on stateless fabrics and for collective shapes
//! whose exits depend on every entry, so no member could have left earlier; with host
//! noise too (the plan asks the members' detours, plan/), but not when overheads occupy the
//! CPU (a receive's overhead would then wait for other work of its rank).

use std::rc::Rc;

use super::host_cpu::HostCpu;
use super::plan::{Costs, MemberCpu, Plan, ShapeKey};
use crate::collectives::{self, Algo, AlgoParams, CollSpec, Program, Selector};
use crate::fabric::Time;
use fast_hash::FastMap;

/// Bound on the one-off dependency analysis of a plan (nodes × bitset words).
const MAX_PLAN_WORDS: usize = 1 << 22;

/// What became of a member entering a closed-form instance.
pub(super) enum Entry {
    /// The members disagree on the instance (kind, size, root or bytes differ from the
    /// first member's, or the member entered twice).
    Disagree,
    /// Other members have yet to enter.
    Waiting,
    /// It was the last to enter: exits are known (`ClosedForms::exits`).
    Complete { members: Rc<[u32]>, messages: u64 },
}

/// An instance some members have entered.
struct Open {
    job: u32,
    comm: i32,
    inst: u64,
    shape: ShapeKey,
    plan: Rc<Plan>,
    members: Rc<[u32]>,
    entry: Vec<Time>,
    entered: usize,
}

pub(super) struct ClosedForms {
    /// The costs plans are built with; None when closed forms are off (the fabric and
    /// host costs do not allow them, or messages are recorded).
    costs: Option<Costs>,
    plans: FastMap<ShapeKey, Option<Rc<Plan>>>,
    /// Open instances (one per communicator at most; usually very few at a time).
    open: Vec<Open>,
    /// Entry-time buffers of closed instances, reused.
    spare: Vec<Vec<Time>>,
    start: Vec<Time>,
    sent: Vec<Time>,
    exits: Vec<Time>,
}

/// An instance's members on the engine's CPUs, at the engine's present `now`.
struct OnRanks<'a> {
    cpu: &'a mut HostCpu,
    members: &'a [u32],
    now: Time,
}

impl MemberCpu for OnRanks<'_> {
    #[inline]
    fn work(&mut self, m: u32, t: Time, work: Time) -> Time {
        self.cpu.work(self.members[m as usize], t, work, self.now)
    }

    #[inline]
    fn back(&mut self, m: u32, t: Time) -> Time {
        self.cpu.back(self.members[m as usize], t)
    }
}

impl ClosedForms {
    pub fn new(costs: Option<Costs>) -> Self {
        Self {
            costs,
            plans: FastMap::default(),
            open: Vec::new(),
            spare: Vec::new(),
            start: Vec::new(),
            sent: Vec::new(),
            exits: Vec::new(),
        }
    }

    pub fn enabled(&self) -> bool {
        self.costs.is_some()
    }

    /// The plan of a collective shape, if it has one (built once per shape).
    pub fn plan_for(
        &mut self,
        shape: ShapeKey,
        spec: &CollSpec,
        algo: Algo,
        params: &AlgoParams,
        selector: &Selector,
    ) -> Option<Rc<Plan>> {
        if let Some(plan) = self.plans.get(&shape) {
            return plan.clone();
        }
        let plan = self.build_plan(spec, algo, params, selector).map(Rc::new);
        self.plans.insert(shape, plan.clone());
        plan
    }

    fn build_plan(
        &self,
        spec: &CollSpec,
        algo: Algo,
        params: &AlgoParams,
        selector: &Selector,
    ) -> Option<Plan> {
        let p = spec.comm_size as usize;
        let words = p.div_ceil(64);
        let mut progs: Vec<Rc<Program>> = Vec::with_capacity(p);
        let mut nodes = 0;
        for me in 0..p as u32 {
            let prog = collectives::schedule(spec, algo, params, me, selector).ok()?;
            nodes += prog.instrs.len() + 1;
            if nodes * words > MAX_PLAN_WORDS {
                return None;
            }
            progs.push(Rc::new(prog));
        }
        Plan::build(&progs, self.costs.as_ref()?)
    }

    /// Member `me` of `members` enters instance `inst` of a closed-form collective on
    /// communicator `comm` of trace `job` at `now`. When it is the last to enter, every
    /// member's exit time is in `exits()`, in member order (on `cpu`, the host's detours,
    /// if any).
    #[allow(clippy::too_many_arguments)]
    pub fn enter(
        &mut self,
        job: u32,
        comm: i32,
        inst: u64,
        shape: ShapeKey,
        plan: Rc<Plan>,
        members: Rc<[u32]>,
        me: u32,
        now: Time,
        cpu: Option<&mut HostCpu>,
    ) -> Entry {
        let p = members.len();
        let at = match self
            .open
            .iter()
            .position(|o| o.job == job && o.comm == comm)
        {
            Some(i) => i,
            None => {
                let mut entry = self.spare.pop().unwrap_or_default();
                entry.clear();
                entry.resize(p, f64::NAN);
                self.open.push(Open {
                    job,
                    comm,
                    inst,
                    shape,
                    plan,
                    members,
                    entry,
                    entered: 0,
                });
                self.open.len() - 1
            }
        };
        let open = &mut self.open[at];
        if open.inst != inst || open.shape != shape || !open.entry[me as usize].is_nan() {
            return Entry::Disagree;
        }
        open.entry[me as usize] = now;
        open.entered += 1;
        if open.entered < p {
            return Entry::Waiting;
        }
        let open = self.open.swap_remove(at);
        open.plan
            .evaluate(&open.entry, &mut self.start, &mut self.exits);
        if let Some(cpu) = cpu {
            // Members without a detour over the span the plan asks them about get nominal
            // answers, and then the compiled evaluation above is exact (plan/).
            let (plan, exits) = (&open.plan, &self.exits);
            let quiet =
                open.members
                    .iter()
                    .zip(&open.entry)
                    .zip(exits)
                    .all(|((&r, &entry), &exit)| {
                        let (from, to) = plan.cpu_span(entry, exit);
                        cpu.undisturbed(r, from, to)
                    });
            if !quiet {
                let mut on = OnRanks {
                    cpu,
                    members: &open.members,
                    now,
                };
                let (start, sent, exits) = (&mut self.start, &mut self.sent, &mut self.exits);
                open.plan
                    .evaluate_on(&open.entry, &mut on, start, sent, exits);
            }
        }
        self.spare.push(open.entry);
        Entry::Complete {
            members: open.members,
            messages: open.plan.messages(),
        }
    }

    /// Every member's exit time from the instance completed last, in member order.
    pub fn exits(&self) -> &[Time] {
        &self.exits
    }
}
