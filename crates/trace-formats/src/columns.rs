//! The TRACE columns a reader fills row by row: plain and nullable integers, nullable lists
//! of integers (offsets, values and validity, the layout Arrow and Parquet take). A column a
//! file being written leaves out can be skipped: its pushes then cost nothing.

/// A nullable column being built.
#[derive(Default)]
pub struct Nullable<T> {
    pub values: Vec<T>,
    pub valid: Vec<bool>,
    /// A column the file being written leaves out (Rows::skip_absent): it stays empty.
    skip: bool,
}

impl<T: Copy + Default> Nullable<T> {
    pub(crate) fn push(&mut self, v: Option<T>) {
        if self.skip {
            return;
        }
        self.values.push(v.unwrap_or_default());
        self.valid.push(v.is_some());
    }

    pub(crate) fn clear(&mut self) {
        self.values.clear();
        self.valid.clear();
    }
}

/// A nullable list column being built (offsets start at 0).
pub struct Lists {
    pub offsets: Vec<i64>,
    pub values: Vec<i64>,
    pub valid: Vec<bool>,
    /// As Nullable's `skip`.
    skip: bool,
}

impl Default for Lists {
    fn default() -> Self {
        Self {
            offsets: vec![0],
            values: Vec::new(),
            valid: Vec::new(),
            skip: false,
        }
    }
}

impl<T: Copy> Nullable<T> {
    pub(crate) fn permuted(&self, order: &[usize]) -> Self {
        if self.skip {
            return Self {
                values: Vec::new(),
                valid: Vec::new(),
                skip: true,
            };
        }
        Self {
            values: order.iter().map(|&i| self.values[i]).collect(),
            valid: order.iter().map(|&i| self.valid[i]).collect(),
            skip: false,
        }
    }
}

impl Lists {
    pub(crate) fn permuted(&self, order: &[usize]) -> Self {
        let mut out = Self {
            skip: self.skip,
            ..Self::default()
        };
        if self.skip {
            return out;
        }
        for &i in order {
            let (lo, hi) = (self.offsets[i] as usize, self.offsets[i + 1] as usize);
            out.push(self.valid[i].then_some(&self.values[lo..hi]));
        }
        out
    }

    pub(crate) fn clear(&mut self) {
        self.offsets.truncate(1);
        self.values.clear();
        self.valid.clear();
    }

    pub(crate) fn push(&mut self, v: Option<&[i64]>) {
        if self.skip {
            return;
        }
        if let Some(items) = v {
            self.values.extend_from_slice(items);
        }
        self.offsets.push(self.values.len() as i64);
        self.valid.push(v.is_some());
    }
}

/// TRACE rows as a reader fills them, column by column (a chunk of rows at a time: the
/// reader takes them and starts again).
#[derive(Default)]
pub struct Rows {
    pub rank: Vec<i64>,
    pub seq: Vec<i64>,
    pub op: Vec<u32>,      // indices of tit::OP_NAMES
    pub time_ns: Vec<i64>, // t_start_ns = t_end_ns: TiT calls take no time
    pub peer: Nullable<i64>,
    pub root: Nullable<i64>,
    pub tag: Nullable<i64>,
    pub send_bytes: Nullable<i64>,
    pub recv_bytes: Nullable<i64>,
    pub request: Nullable<i64>,
    /// Collectives: the size of the datatype their counts are in (TiT has no reduction
    /// op, so `commutative` stays absent).
    pub dtype_bytes: Nullable<i64>,
    pub requests: Lists,
    pub send_counts: Lists,
    pub recv_counts: Lists,
}

impl Rows {
    /// The rows in `order` (a single-file trace's, by rank).
    pub(crate) fn permuted(&self, order: &[usize]) -> Self {
        let pick = |v: &[i64]| order.iter().map(|&i| v[i]).collect();
        Self {
            rank: pick(&self.rank),
            seq: pick(&self.seq),
            op: order.iter().map(|&i| self.op[i]).collect(),
            time_ns: pick(&self.time_ns),
            peer: self.peer.permuted(order),
            root: self.root.permuted(order),
            tag: self.tag.permuted(order),
            send_bytes: self.send_bytes.permuted(order),
            recv_bytes: self.recv_bytes.permuted(order),
            request: self.request.permuted(order),
            dtype_bytes: self.dtype_bytes.permuted(order),
            requests: self.requests.permuted(order),
            send_counts: self.send_counts.permuted(order),
            recv_counts: self.recv_counts.permuted(order),
        }
    }

    /// Pushes nothing more to the optional columns not in `names` (those a file being
    /// written leaves out: their pushes were a third of a row's).
    pub(crate) fn skip_absent(&mut self, names: &[String]) {
        let absent = |name: &str| !names.iter().any(|n| n == name);
        for (name, n) in [
            ("peer", &mut self.peer),
            ("root", &mut self.root),
            ("tag", &mut self.tag),
            ("send_bytes", &mut self.send_bytes),
            ("recv_bytes", &mut self.recv_bytes),
            ("request", &mut self.request),
            ("dtype_bytes", &mut self.dtype_bytes),
        ] {
            n.skip = absent(name);
        }
        for (name, l) in [
            ("requests", &mut self.requests),
            ("send_counts", &mut self.send_counts),
            ("recv_counts", &mut self.recv_counts),
        ] {
            l.skip = absent(name);
        }
    }

    /// Drops every row but keeps the buffers: the next rows reuse their memory.
    pub(crate) fn clear(&mut self) {
        self.rank.clear();
        self.seq.clear();
        self.op.clear();
        self.time_ns.clear();
        for n in [
            &mut self.peer,
            &mut self.root,
            &mut self.tag,
            &mut self.dtype_bytes,
            &mut self.send_bytes,
            &mut self.recv_bytes,
            &mut self.request,
        ] {
            n.clear();
        }
        for l in [
            &mut self.requests,
            &mut self.send_counts,
            &mut self.recv_counts,
        ] {
            l.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_keep_offsets_and_validity_through_a_permutation() {
        let mut l = Lists::default();
        l.push(Some(&[1, 2]));
        l.push(None);
        l.push(Some(&[]));
        l.push(Some(&[3]));
        assert_eq!(l.offsets, [0, 2, 2, 2, 3]);
        assert_eq!(l.valid, [true, false, true, true]);
        let p = l.permuted(&[3, 1, 0, 2]);
        assert_eq!(p.offsets, [0, 1, 1, 3, 3]);
        assert_eq!(p.values, [3, 1, 2]);
        assert_eq!(p.valid, [true, false, true, true]);
        l.clear();
        assert_eq!((l.offsets.as_slice(), l.values.len()), (&[0][..], 0));
    }

    #[test]
    fn nullable_nulls_are_defaults_marked_invalid_and_skipped_columns_stay_empty() {
        let mut n = Nullable::<i64>::default();
        n.push(Some(7));
        n.push(None);
        assert_eq!(
            (n.values.as_slice(), n.valid.as_slice()),
            (&[7, 0][..], &[true, false][..])
        );
        let p = n.permuted(&[1, 0]);
        assert_eq!((p.values, p.valid), (vec![0, 7], vec![false, true]));
        let mut rows = Rows::default();
        rows.skip_absent(&["tag".to_string()]);
        rows.tag.push(Some(1));
        rows.peer.push(Some(1));
        rows.requests.push(Some(&[1]));
        assert_eq!(rows.tag.values, [1]);
        assert!(rows.peer.values.is_empty() && rows.requests.valid.is_empty());
    }
}
