//! The collective programs of a replay: the selector that picks each call's algorithm (Open
//! MPI's fixed rules or a `--coll` override), the programs built so far (one per shape and
//! member, reused by every call of that shape), communicators' member lists, and the
//! request-slot buffers of finished runs.

use std::rc::Rc;

use super::plan::ShapeKey;
use crate::collectives::{Program, Selector};
use fast_hash::FastMap;

/// A collective shape and one member's communicator rank.
pub(super) type ProgramKey = (ShapeKey, u32);

pub(super) struct Programs {
    pub selector: Selector,
    pub built: FastMap<ProgramKey, Rc<Program>>,
    /// (trace, communicator) → the engine's ranks of its members, in communicator order.
    pub members: FastMap<(u32, i32), Rc<[u32]>>,
    /// Request-slot buffers of finished runs, reused.
    pub spare: Vec<Vec<u32>>,
}

impl Programs {
    pub fn new(selector: Selector) -> Self {
        Self {
            selector,
            built: FastMap::default(),
            members: FastMap::default(),
            spare: Vec::new(),
        }
    }
}
