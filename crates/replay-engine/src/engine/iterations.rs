//! Per-iteration latencies of OSU-pattern traces: per rank, the span of each iteration
//! (its first start to its last end), folded as the rank leaves the iteration into the
//! trace's latency per iteration: the longest span over ranks (OSU's reported quantity)
//! and the mean span over the ranks that ran the iteration — what the agent stores for a
//! measured run (samples.latency_us and latency_us_mean). In an OSU-pattern trace only the
//! timed call carries the iteration, not the barrier before it, so a rank's span is its own
//! interval of that call, as OSU times it (DESIGN.md, "The iteration statistic").

use std::collections::BTreeMap;

use crate::fabric::Time;

/// A rank's iterations whose spans are not yet folded: the first inline (the usual single
/// open iteration costs no visit to a separate buffer on every row), others only when
/// iteration ids go back.
#[derive(Debug)]
pub(super) struct OpenSpans {
    /// (iteration, first start, last end); iteration -1: none.
    first: (i32, Time, Time),
    more: Vec<(i32, Time, Time)>,
}

const NONE: (i32, Time, Time) = (-1, 0.0, 0.0);

impl Default for OpenSpans {
    fn default() -> Self {
        Self {
            first: NONE,
            more: Vec::new(),
        }
    }
}

impl OpenSpans {
    /// A row of iteration `it` (>= 0) ran from `start` to `end`.
    #[inline]
    pub(super) fn record(&mut self, done: &mut IterationLatency, it: i32, start: Time, end: Time) {
        let first = &mut self.first;
        if first.0 == it {
            first.1 = first.1.min(start);
            first.2 = first.2.max(end);
            return;
        }
        if self.more.is_empty() && first.0 < it {
            // The usual case: a new iteration ends the only open one (if any).
            if first.0 >= 0 {
                done.fold(first.0, first.2 - first.1);
            }
            *first = (it, start, end);
            return;
        }
        // Iteration ids went back: the general case over every open span, in order.
        let mut open = std::mem::take(&mut self.more);
        if first.0 >= 0 {
            open.insert(0, *first);
        }
        if let Some(span) = open.iter_mut().find(|s| s.0 == it) {
            span.1 = span.1.min(start);
            span.2 = span.2.max(end);
        } else {
            // A new iteration: the earlier ones are over for this rank.
            open.retain(|&(i, s, e)| {
                if i < it {
                    done.fold(i, e - s);
                }
                i >= it
            });
            open.push((it, start, end));
        }
        self.first = if open.is_empty() {
            NONE
        } else {
            open.remove(0)
        };
        self.more = open;
    }

    /// The end of the trace: folds every span still open.
    pub(super) fn close_all(&mut self, done: &mut IterationLatency) {
        let first = std::mem::replace(&mut self.first, NONE);
        for (i, s, e) in std::iter::once(first)
            .filter(|span| span.0 >= 0)
            .chain(self.more.drain(..))
        {
            done.fold(i, e - s);
        }
    }
}

/// Iteration → (longest span, sum of spans, ranks folded): a vector for the usual small
/// dense ids, a map for the others.
#[derive(Debug, Default)]
pub(super) struct IterationLatency {
    dense: Vec<Folded>, // count 0: not seen
    sparse: BTreeMap<i32, Folded>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Folded {
    /// Starts at 0.0: a span is never shorter.
    max: f64,
    sum: f64,
    ranks: u32,
}

impl Folded {
    #[inline]
    fn add(&mut self, span: f64) {
        self.max = self.max.max(span);
        self.sum += span;
        self.ranks += 1;
    }
}

const DENSE_ITERATIONS: i32 = 1 << 24;

/// Per iteration present (ascending ids): its longest span and its mean span over ranks.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct Latencies {
    pub iterations: Vec<i32>,
    pub max_ns: Vec<f64>,
    pub mean_ns: Vec<f64>,
}

impl IterationLatency {
    pub(super) fn fold(&mut self, it: i32, span: f64) {
        if it < DENSE_ITERATIONS {
            let i = it as usize;
            if self.dense.len() <= i {
                self.dense
                    .resize((i + 1).max(2 * self.dense.len()), Folded::default());
            }
            self.dense[i].add(span);
        } else {
            self.sparse.entry(it).or_default().add(span);
        }
    }

    pub(super) fn take(&mut self) -> Latencies {
        let dense = std::mem::take(&mut self.dense);
        let sparse = std::mem::take(&mut self.sparse);
        let seen = dense
            .into_iter()
            .enumerate()
            .filter(|(_, f)| f.ranks > 0)
            .map(|(i, f)| (i as i32, f))
            .chain(sparse);
        let mut out = Latencies::default();
        for (it, f) in seen {
            out.iterations.push(it);
            out.max_ns.push(f.max);
            out.mean_ns.push(f.sum / f64::from(f.ranks));
        }
        out
    }
}
