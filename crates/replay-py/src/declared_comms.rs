//! Communicators a trace declares: comm_split/dup/create rows carry the new id (`new_comm`)
//! and its members in communicator-rank order (`comm_members`).

use std::collections::HashSet;

use pyo3::prelude::*;

use crate::lists::Csr;
use crate::source::{append_ints, Batch, Source};

/// The communicators declared by rows so far (`new_comm` >= 0 with its `comm_members`),
/// first declaration of an id wins.
#[derive(Default)]
pub(crate) struct Declared {
    pub(crate) comms: Vec<(i32, Vec<i64>)>,
    ids: HashSet<i32>,
}

impl Declared {
    pub(crate) fn add(&mut self, batch: &Batch<'_>) -> PyResult<()> {
        let members = batch.get("comm_members");
        let new = batch.get("new_comm");
        if matches!(new, Source::Absent) || members.all_null() {
            return Ok(()); // nothing declared
        }
        let rows = batch.rows;
        let mut ids: Vec<i64> = Vec::with_capacity(rows);
        append_ints(new, rows, -1i64, &mut ids)?;
        if ids.iter().all(|&i| i < 0) {
            return Ok(());
        }
        let mut csr = Csr::default();
        csr.append(members, rows)?;
        for (i, &id) in ids.iter().enumerate() {
            let listed = members.is_valid(i);
            if id < 0 || !listed || self.ids.contains(&(id as i32)) {
                continue;
            }
            let members = if csr.offsets.is_empty() {
                Vec::new() // every member list of the batch is empty
            } else {
                csr.values[csr.offsets[i] as usize..csr.offsets[i + 1] as usize].to_vec()
            };
            self.ids.insert(id as i32);
            self.comms.push((id as i32, members));
        }
        Ok(())
    }
}
