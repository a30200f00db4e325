//! Ctrl-C and SIGTERM while the engine runs. Python runs signal handlers only on the main
//! thread between bytecodes, and `replay` runs the engine without the GIL; so the engine's
//! driver asks between pieces of work, and at most every `PERIOD` the binding takes the GIL
//! for `PyErr_CheckSignals`, which runs the pending handlers. A handler that raises (the
//! default SIGINT handler, tailcast's SIGTERM handler) stops the replay with its exception.

use std::time::{Duration, Instant};

use pyo3::prelude::*;

/// Longest time between two looks at the signal flags (the engine's pieces of work are
/// shorter still, see replay-engine's `replay_interruptible`).
const PERIOD: Duration = Duration::from_millis(20);

pub(crate) struct SignalPoll {
    next: Instant,
    /// The exception a signal handler raised.
    pub(crate) raised: Option<PyErr>,
}

impl SignalPoll {
    pub(crate) fn new() -> Self {
        Self {
            next: Instant::now() + PERIOD,
            raised: None,
        }
    }

    /// True once a signal handler raised; call without the GIL held.
    pub(crate) fn interrupted(&mut self) -> bool {
        if self.raised.is_some() {
            return true;
        }
        let now = Instant::now(); // a vDSO read: ~25 ns, against ~1 ms of work per piece
        if now < self.next {
            return false;
        }
        self.next = now + PERIOD;
        if let Err(err) = Python::with_gil(|py| py.check_signals()) {
            self.raised = Some(err);
        }
        self.raised.is_some()
    }
}
