//! Simulated times (f64 ns) to the integer ns Python receives.

/// Simulated times to integer ns, rounded half away from zero as `f64::round` does, in place
/// (same-size element types reuse the allocation). Done by truncation and the exact
/// fractional part: `round` is a libm call per value on baseline x86-64.
pub(crate) fn to_ns(v: Vec<f64>) -> Vec<i64> {
    v.into_iter().map(round_ns).collect()
}

#[inline]
pub(crate) fn round_ns(t: f64) -> i64 {
    if t.abs() >= 4_503_599_627_370_496.0 || t.is_nan() {
        return t as i64; // 2^52 and beyond every value is an integer (NaN → 0, saturating)
    }
    let whole = t as i64;
    let frac = t - whole as f64; // exact below 2^52
    whole + i64::from(frac >= 0.5) - i64::from(frac <= -0.5)
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_ns_matches_f64_round() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let special = [
            0.5,
            1.5,
            2.5,
            -0.5,
            -2.5,
            0.49999999999999994,
            4503599627370495.5,
            1e300,
            -1e300,
            f64::INFINITY,
            f64::NAN,
            -0.0,
        ];
        for t in special.into_iter().chain((0..100_000).map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // random magnitudes, tiny to huge, both signs
            f64::from_bits(x >> 2) * if x & 1 == 1 { -1.0 } else { 1.0 }
        })) {
            assert_eq!(super::round_ns(t), t.round() as i64, "{t}");
            assert_eq!(super::round_ns(t / 3.7), (t / 3.7).round() as i64, "{t}");
        }
    }
}
