//! Per-iteration latencies of OSU-pattern traces: per rank, the span of each iteration
//! (its first start to its last end), folded as the rank leaves the iteration into the
//! trace's latency per iteration (the longest span over ranks, OSU's reported quantity).

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

/// Iteration → latency: a vector for the usual small dense ids, a map for the others.
#[derive(Debug, Default)]
pub(super) struct IterationLatency {
    dense: Vec<f64>, // NaN: not seen
    sparse: BTreeMap<i32, f64>,
}

const DENSE_ITERATIONS: i32 = 1 << 24;

impl IterationLatency {
    pub(super) fn fold(&mut self, it: i32, span: f64) {
        if it < DENSE_ITERATIONS {
            let i = it as usize;
            if self.dense.len() <= i {
                self.dense
                    .resize((i + 1).max(2 * self.dense.len()), f64::NAN);
            }
            let l = &mut self.dense[i];
            *l = if l.is_nan() {
                0.0f64.max(span)
            } else {
                l.max(span)
            };
        } else {
            let l = self.sparse.entry(it).or_insert(0.0);
            *l = l.max(span);
        }
    }

    /// (iteration ids ascending, latencies).
    pub(super) fn take(&mut self) -> (Vec<i32>, Vec<f64>) {
        let dense = std::mem::take(&mut self.dense);
        let sparse = std::mem::take(&mut self.sparse);
        dense
            .into_iter()
            .enumerate()
            .filter(|(_, l)| !l.is_nan())
            .map(|(i, l)| (i as i32, l))
            .chain(sparse)
            .unzip()
    }
}
