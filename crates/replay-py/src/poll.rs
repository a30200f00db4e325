//! What the binding does while the engine runs without the GIL: Ctrl-C and SIGTERM, and
//! progress. Python runs signal handlers only on the main thread between bytecodes, and
//! `replay` runs the engine without the GIL; so the engine's driver asks between pieces of
//! work, and at most every `PERIOD` the binding takes the GIL for `PyErr_CheckSignals`,
//! which runs the pending handlers, and tells the caller's progress callback how many more
//! foreground rows the engine took since it last did. A handler or callback that raises
//! (the default SIGINT handler, tailcast's SIGTERM handler) stops the replay with its
//! exception.

use std::time::{Duration, Instant};

use pyo3::prelude::*;

/// Longest time between two looks at the signal flags (the engine's pieces of work are
/// shorter still, see replay-engine's `replay_interruptible`).
const PERIOD: Duration = Duration::from_millis(20);

pub(crate) struct Poll {
    next: Instant,
    /// Called with the foreground rows fed since its last call.
    progress: Option<Py<PyAny>>,
    reported: u64,
    /// The exception a signal handler or the progress callback raised.
    pub(crate) raised: Option<PyErr>,
}

impl Poll {
    pub(crate) fn new(progress: Option<Py<PyAny>>) -> Self {
        Self {
            next: Instant::now() + PERIOD,
            progress,
            reported: 0,
            raised: None,
        }
    }

    /// True once a signal handler or the progress callback raised; `fed`: foreground rows
    /// handed to the engine so far. Call without the GIL held.
    pub(crate) fn interrupted(&mut self, fed: u64) -> bool {
        if self.raised.is_some() {
            return true;
        }
        let now = Instant::now(); // a vDSO read: ~25 ns, against ~1 ms of work per piece
        if now < self.next {
            return false;
        }
        self.next = now + PERIOD;
        if let Err(err) = Python::with_gil(|py| {
            py.check_signals()?;
            self.report(py, fed)
        }) {
            self.raised = Some(err);
        }
        self.raised.is_some()
    }

    /// Tells the progress callback the rows fed since its last call (none: no call).
    pub(crate) fn report(&mut self, py: Python<'_>, fed: u64) -> PyResult<()> {
        if let Some(callback) = &self.progress {
            if fed > self.reported {
                callback.call1(py, (fed - self.reported,))?;
                self.reported = fed;
            }
        }
        Ok(())
    }
}
