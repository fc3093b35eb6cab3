//! Medians and percentiles of millisecond samples, and how they are printed.

use serde_json::{Value, json};

/// Millisecond samples of one measure.
#[derive(Debug, Clone, Default)]
pub struct Samples(pub Vec<f64>);

impl Samples {
    pub fn push(&mut self, ms: f64) {
        self.0.push(ms);
    }

    pub fn extend(&mut self, other: &Samples) {
        self.0.extend_from_slice(&other.0);
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    fn sorted(&self) -> Vec<f64> {
        let mut sorted = self.0.clone();
        sorted.sort_by(f64::total_cmp);
        sorted
    }

    /// The median (mean of the middle two for an even count); NaN if empty.
    pub fn median(&self) -> f64 {
        let s = self.sorted();
        match s.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => s[n / 2],
            n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
        }
    }

    /// Nearest-rank percentile `q` in (0, 1]; NaN if empty. With 50 samples p99 is the maximum.
    pub fn pct(&self, q: f64) -> f64 {
        let s = self.sorted();
        if s.is_empty() {
            return f64::NAN;
        }
        let rank = (q * s.len() as f64).ceil() as usize;
        s[rank.clamp(1, s.len()) - 1]
    }

    pub fn min(&self) -> f64 {
        self.sorted().first().copied().unwrap_or(f64::NAN)
    }

    pub fn max(&self) -> f64 {
        self.sorted().last().copied().unwrap_or(f64::NAN)
    }

    pub fn json(&self) -> Value {
        json!({
            "n": self.len(),
            "median": self.median(),
            "p90": self.pct(0.90),
            "p99": self.pct(0.99),
            "min": self.min(),
            "max": self.max(),
            "samples": self.0,
        })
    }
}

/// Milliseconds with precision suited to their size.
pub fn ms(v: f64) -> String {
    if v.is_nan() {
        "–".to_owned()
    } else if v.abs() >= 100.0 {
        format!("{v:.0} ms")
    } else if v.abs() >= 10.0 {
        format!("{v:.1} ms")
    } else {
        format!("{v:.2} ms")
    }
}

/// A ratio of two medians.
pub fn ratio(a: f64, b: f64) -> String {
    if a.is_nan() || b.is_nan() || b == 0.0 {
        "–".to_owned()
    } else {
        format!("{:.2}×", a / b)
    }
}
