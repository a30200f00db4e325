//! Clock corrections of one location (OTF2 source: otf2_archive.c's handling of the
//! local ClockOffset records and OTF2_EvtReader.c,
//! `otf2_evt_reader_apply_clock_correction`; the global event reader always applies
//! them). Consecutive ClockOffset records (time, offset) bound an interval over which
//! the offset is interpolated linearly; a timestamp uses the first interval from the
//! current one on whose end it does not pass (the last interval past the end), and
//! moves to it — times rise within a location. A lone last record opens no interval.

/// One interval between two ClockOffset records.
#[derive(Debug, Clone, Copy)]
struct Interval {
    begin: u64,
    end: u64,
    offset: i64,
    slope: f64,
}

#[derive(Debug, Default)]
pub struct ClockCorrection {
    intervals: Vec<Interval>,
    pending: Option<(u64, i64)>,
    current: usize,
}

impl ClockCorrection {
    /// Adds the ClockOffset record (time, offset); Err when it is not later than the
    /// previous one (OTF2: "Multiple timer synchronization at the same time").
    pub fn add(&mut self, time: u64, offset: i64) -> Result<(), String> {
        if let Some((begin, begin_offset)) = self.pending {
            if begin >= time {
                return Err(format!(
                    "ClockOffset at {time} not after the previous one at {begin}"
                ));
            }
            // The difference is converted to double, not the values (as OTF2 does).
            let slope = offset.wrapping_sub(begin_offset) as f64 / (time - begin) as f64;
            self.intervals.push(Interval {
                begin,
                end: time,
                offset: begin_offset,
                slope,
            });
        }
        self.pending = Some((time, offset));
        Ok(())
    }

    /// `time` corrected (unchanged without intervals).
    pub fn apply(&mut self, time: u64) -> u64 {
        if self.intervals.is_empty() {
            return time;
        }
        while self.current + 1 < self.intervals.len() && time > self.intervals[self.current].end {
            self.current += 1;
        }
        let i = self.intervals[self.current];
        let diff = if time >= i.begin {
            (time - i.begin) as f64
        } else {
            -((i.begin - time) as f64)
        };
        // rint: rounds halves to even in the default rounding mode; `as` saturates
        // where C's conversion would be undefined.
        let offset = i
            .offset
            .wrapping_add((i.slope * diff).round_ties_even() as i64);
        time.wrapping_add(offset as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_interpolate_between_records_and_extrapolate_past_them() {
        let mut clock = ClockCorrection::default();
        clock.add(100, 10).unwrap();
        assert_eq!(clock.apply(150), 150, "one record opens no interval");
        clock.add(200, 20).unwrap();
        assert_eq!(clock.apply(50), 55); // before the first record: the first interval
        assert_eq!(clock.apply(150), 165);
        assert_eq!(clock.apply(300), 330); // past the last: the last interval
        assert!(clock.add(200, 0).is_err());
    }
}
