//! Decoded rows of one column, in the form the trace converters read.

/// Values of some rows of one column.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// One integer per row (a null row holds 0).
    Ints(Vec<i64>),
    /// One key per row into the cursor's string dictionary (a null row holds 0).
    Strings(Vec<u32>),
    /// A list per row: `offsets` (rows + 1 entries) into `values`; a null element is 0.
    Lists { offsets: Vec<i64>, values: Vec<i64> },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub rows: usize,
    /// Per row, false for null; None when no row is null.
    pub valid: Option<Vec<bool>>,
    pub values: Values,
}

impl Column {
    /// No rows yet, with room for `rows` rows (and as many list elements).
    pub(crate) fn with_capacity(list: bool, strings: bool, rows: usize) -> Self {
        let values = if list {
            let mut offsets = Vec::with_capacity(rows + 1);
            offsets.push(0);
            Values::Lists {
                offsets,
                values: Vec::with_capacity(rows),
            }
        } else if strings {
            Values::Strings(Vec::with_capacity(rows))
        } else {
            Values::Ints(Vec::with_capacity(rows))
        };
        Self {
            rows: 0,
            valid: None,
            values,
        }
    }

    /// Marks the next row valid or not (the bitmap is made at the first null).
    #[inline]
    pub(crate) fn push_valid(&mut self, valid: bool) {
        match &mut self.valid {
            Some(v) => v.push(valid),
            None if !valid => {
                let mut v = vec![true; self.rows];
                v.push(false);
                self.valid = Some(v);
            }
            None => {}
        }
        self.rows += 1;
    }

    /// Whether row `i` is valid.
    #[inline]
    pub fn is_valid(&self, i: usize) -> bool {
        self.valid.as_ref().is_none_or(|v| v[i])
    }

    /// Every row null.
    pub fn all_null(&self) -> bool {
        self.rows > 0 && self.valid.as_ref().is_some_and(|v| v.iter().all(|&b| !b))
    }
}
