//! Closed-form collectives in the event loop (see plan/). Members entering an instance
//! wait ("gather") until the last one enters; then the plan gives every member's exit time
//! at once and each resumes then. Used only on stateless fabrics and for collective shapes
//! whose exits depend on every entry, so no member could have left earlier.

use std::rc::Rc;

use super::core::{Engine, Ev, Outcome};
use super::plan::{Costs, Plan, ShapeKey};
use super::ranks::RState;
use crate::collectives::{self, Algo, AlgoParams, CollSpec, Program};
use crate::error::ReplayError;
use crate::fabric::Time;
use fast_hash::FastMap;

/// Bound on the one-off dependency analysis of a plan (nodes × bitset words).
const MAX_PLAN_WORDS: usize = 1 << 22;

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

pub struct ClosedForms {
    /// The fabric and host costs allow closed forms.
    pub enabled: bool,
    plans: FastMap<ShapeKey, Option<Rc<Plan>>>,
    /// Open instances (one per communicator at most; usually very few at a time).
    open: Vec<Open>,
    /// Entry-time buffers of closed instances, reused.
    spare: Vec<Vec<Time>>,
    start: Vec<Time>,
    exits: Vec<Time>,
}

impl ClosedForms {
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled,
            plans: FastMap::default(),
            open: Vec::new(),
            spare: Vec::new(),
            start: Vec::new(),
            exits: Vec::new(),
        }
    }
}

impl Engine {
    /// The plan of a collective shape, if it has one (built once per shape).
    pub(super) fn plan_for(
        &mut self,
        shape: ShapeKey,
        spec: &CollSpec,
        algo: Algo,
        params: &AlgoParams,
    ) -> Option<Rc<Plan>> {
        if let Some(plan) = self.colls.closed.plans.get(&shape) {
            return plan.clone();
        }
        let plan = self.build_plan(spec, algo, params).map(Rc::new);
        self.colls.closed.plans.insert(shape, plan.clone());
        plan
    }

    fn build_plan(&self, spec: &CollSpec, algo: Algo, params: &AlgoParams) -> Option<Plan> {
        let p = spec.comm_size as usize;
        let words = p.div_ceil(64);
        let mut progs: Vec<Rc<Program>> = Vec::with_capacity(p);
        let mut nodes = 0;
        for me in 0..p as u32 {
            let prog = collectives::schedule(spec, algo, params, me, self.colls.selector()).ok()?;
            nodes += prog.instrs.len() + 1;
            if nodes * words > MAX_PLAN_WORDS {
                return None;
            }
            progs.push(Rc::new(prog));
        }
        let (alpha_ns, beta_ns_per_byte) = self.net.alpha_beta?;
        let costs = Costs {
            alpha_ns,
            beta_ns_per_byte,
            overhead_ns: self.net.host.overhead_ns,
            overhead_ns_per_byte: self.net.host.overhead_ns_per_byte,
            gamma_ns_per_byte: self.net.host.gamma_ns_per_byte,
            eager_threshold: self.net.eager_threshold,
        };
        Plan::build(&progs, &costs)
    }

    /// Rank `r` (member `me`) enters instance `inst` of a closed-form collective.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn gather(
        &mut self,
        r: u32,
        me: u32,
        comm: i32,
        inst: u64,
        shape: ShapeKey,
        plan: Rc<Plan>,
        members: Rc<[u32]>,
    ) -> Outcome {
        let now = self.now;
        let job = self.ranks[r as usize].job;
        let p = members.len();
        let g = &mut self.colls.closed;
        let at = match g.open.iter().position(|o| o.job == job && o.comm == comm) {
            Some(i) => i,
            None => {
                let mut entry = g.spare.pop().unwrap_or_default();
                entry.clear();
                entry.resize(p, f64::NAN);
                g.open.push(Open {
                    job,
                    comm,
                    inst,
                    shape,
                    plan,
                    members,
                    entry,
                    entered: 0,
                });
                g.open.len() - 1
            }
        };
        let open = &mut g.open[at];
        if open.inst != inst || open.shape != shape || !open.entry[me as usize].is_nan() {
            let message = format!(
                "members of communicator {comm} disagree on collective #{inst} (kind, size, \
                 root or bytes differ from the first member's)"
            );
            if self.fatal.is_none() {
                let row = self.ranks[r as usize].rows.current_id() as usize;
                self.fatal = Some(ReplayError::Collective {
                    trace: job,
                    row,
                    message,
                });
            }
            return Outcome::Failed;
        }
        open.entry[me as usize] = now;
        open.entered += 1;
        if open.entered < p {
            self.ranks[r as usize].state = RState::Gathered;
            return Outcome::Blocked;
        }
        let g = &mut self.colls.closed;
        let open = g.open.swap_remove(at);
        open.plan.evaluate(&open.entry, &mut g.start, &mut g.exits);
        g.spare.push(open.entry);
        let exits = std::mem::take(&mut self.colls.closed.exits);
        for &m in open.members.iter() {
            if m != r {
                self.ranks[m as usize].state = RState::Woken;
            }
        }
        let others = open.members.iter().zip(&exits).filter(|(&m, _)| m != r);
        self.queue
            .push_batch(others.map(|(&m, &t)| (t, Ev::Resume(m))));
        let mine = exits[me as usize];
        self.colls.closed.exits = exits;
        self.stats.messages += open.plan.messages();
        Outcome::End(mine)
    }
}
