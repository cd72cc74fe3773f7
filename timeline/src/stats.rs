//! The interval and statistics helpers of the whole project, written once: every union of
//! busy intervals (utilisation, charts, calibration), every quantile and mean goes through
//! here, so that "p50" or "busy" means the same thing in `summary.json`, in a chart and in a
//! fitted model.
//!
//! Intervals are half-open `[start, end)` in integer nanoseconds; "merged" lists are sorted
//! and disjoint, touching intervals merged, empty ones dropped.
//!
//! **Quantiles** (one definition): linear interpolation between the closest ranks —
//! position `q · (n − 1)` in the sorted values, numpy's default (`method = "linear"`, R's
//! type 7). `None` for no values; `q` is clamped to `0..=1`.

use crate::event::Span;

/// Merge closed `[start, end)` intervals into a sorted, disjoint list (touching intervals
/// merge). Empty intervals are dropped.
pub fn merge_intervals(mut v: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    v.retain(|&(s, e)| e > s);
    v.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(v.len());
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// The busy intervals of a set of spans: the union of their closed `[start, end)`
/// intervals, sorted and disjoint. Open spans are ignored.
pub fn busy_intervals<'a>(spans: impl IntoIterator<Item = &'a Span>) -> Vec<(u64, u64)> {
    merge_intervals(spans.into_iter().filter_map(|s| s.end_ns.map(|e| (s.start_ns, e))).collect())
}

/// Largest number of intervals open at once (a sweep line; an interval ending where
/// another starts does not overlap it).
pub fn max_concurrency(intervals: impl IntoIterator<Item = (u64, u64)>) -> u32 {
    let mut ev: Vec<(u64, i32)> = Vec::new();
    for (s, e) in intervals {
        ev.push((s, 1));
        ev.push((e, -1));
    }
    ev.sort_unstable();
    let (mut cur, mut best) = (0i32, 0i32);
    for (_, d) in ev {
        cur += d;
        best = best.max(cur);
    }
    best.max(0) as u32
}

/// Total length of disjoint intervals, ns.
pub fn total_ns(merged: &[(u64, u64)]) -> u64 {
    merged.iter().fold(0u64, |a, &(s, e)| a.saturating_add(e.saturating_sub(s)))
}

/// Length of `[a, b)` covered by sorted disjoint intervals, ns. O(log n + k).
pub fn overlap_ns(merged: &[(u64, u64)], a: u64, b: u64) -> u64 {
    if b <= a {
        return 0;
    }
    let first = merged.partition_point(|&(_, e)| e <= a);
    let mut total = 0;
    for &(s, e) in &merged[first..] {
        if s >= b {
            break;
        }
        total += e.min(b).saturating_sub(s.max(a));
    }
    total
}

/// Length of the union of `[start, end)` intervals, ns.
pub fn union_ns(intervals: Vec<(u64, u64)>) -> u64 {
    total_ns(&merge_intervals(intervals))
}

/// Quantile `q` (0..=1) of sorted values (see the module doc for the definition).
pub fn quantile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let frac = pos - lo as f64;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * frac)
}

/// Quantile `q` of unsorted values (sorts a copy; NaNs sort last, by `total_cmp`).
pub fn quantile(values: &[f64], q: f64) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    quantile_sorted(&v, q)
}

/// Median of unsorted values.
pub fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    quantile_sorted(&v, 0.5)
}

/// Arithmetic mean, `None` for no values.
pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_union_and_overlap() {
        let m = merge_intervals(vec![(5, 10), (0, 3), (3, 4), (9, 12), (20, 20)]);
        assert_eq!(m, vec![(0, 4), (5, 12)]);
        assert_eq!(total_ns(&m), 11);
        assert_eq!(union_ns(vec![(5, 10), (0, 3), (3, 4), (9, 12), (20, 20)]), 11);
        assert_eq!(overlap_ns(&m, 2, 6), 3);
        assert_eq!(overlap_ns(&m, 12, 30), 0);
        assert_eq!(overlap_ns(&m, 0, 100), 11);
        assert_eq!(max_concurrency([(0, 10), (5, 15), (10, 20)]), 2);
    }

    #[test]
    fn quantiles_interpolate_like_numpy() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile_sorted(&v, 0.5), Some(2.5));
        assert_eq!(quantile_sorted(&v, 0.0), Some(1.0));
        assert_eq!(quantile_sorted(&v, 1.0), Some(4.0));
        assert!((quantile_sorted(&v, 0.95).unwrap() - 3.85).abs() < 1e-12);
        assert_eq!(quantile_sorted(&[], 0.5), None);
        assert_eq!(quantile(&[4.0, 1.0, 3.0, 2.0], 0.25), Some(1.75));
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(mean(&[1.0, 2.0]), Some(1.5));
        assert_eq!(mean(&[]), None);
    }
}
