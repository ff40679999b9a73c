//! The Prometheus text exposition format (0.0.4), as much of it as the metrics need.
//!
//! What it is: [`Family`], which writes one metric family's `# HELP` and `# TYPE` lines and
//! then its samples, each with the family's fixed labels (ArangoDB's `role="SINGLE"`, or none)
//! followed by the sample's own.
//!
//! What it is not: a parser, or a registry of metrics.
//!
//! Invariants: every sample follows its family's `# HELP` and `# TYPE` lines; a histogram's
//! buckets are cumulative and end with `+Inf`, which equals its `_count`.

use std::fmt::Write;

use super::requests::Histogram;

/// How bucket bounds are written.
#[derive(Clone, Copy, Debug)]
pub(crate) enum BoundStyle {
    /// The shortest form (`0.005`), Quince's own families.
    Shortest,
    /// Six decimals (`0.005000`), as ArangoDB writes them.
    Fixed6,
}

/// One metric family being written.
pub(crate) struct Family<'a> {
    out: &'a mut String,
    name: &'a str,
    labels: &'a str,
}

impl<'a> Family<'a> {
    /// Writes the family's header; `labels` (`role="SINGLE"`, or empty) go on every sample.
    pub(crate) fn new(
        out: &'a mut String,
        name: &'a str,
        kind: &str,
        help: &str,
        labels: &'a str,
    ) -> Family<'a> {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        Family { out, name, labels }
    }

    /// One sample with extra labels (`method="GET"`, or empty).
    pub(crate) fn sample_with(&mut self, suffix: &str, extra: &str, value: impl std::fmt::Display) {
        let labels = match (self.labels.is_empty(), extra.is_empty()) {
            (true, true) => String::new(),
            (false, true) => format!("{{{}}}", self.labels),
            (true, false) => format!("{{{extra}}}"),
            (false, false) => format!("{{{},{extra}}}", self.labels),
        };
        let _ = writeln!(self.out, "{}{suffix}{labels} {value}", self.name);
    }

    /// One sample with only the family's labels.
    pub(crate) fn sample(&mut self, value: impl std::fmt::Display) {
        self.sample_with("", "", value);
    }

    /// A histogram's buckets at `bounds` (each one of `h.bounds`), `+Inf`, sum and count.
    pub(crate) fn histogram(&mut self, h: &Histogram, bounds: &[f64], style: BoundStyle) {
        for bound in bounds {
            let le = match style {
                BoundStyle::Shortest => format!("le=\"{bound}\""),
                BoundStyle::Fixed6 => format!("le=\"{bound:.6}\""),
            };
            self.sample_with("_bucket", &le, h.cumulative_at(*bound));
        }
        let count = h.count();
        self.sample_with("_bucket", "le=\"+Inf\"", count);
        self.sample_with("_sum", "", h.sum);
        self.sample_with("_count", "", count);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_carry_the_family_labels_first() {
        let mut out = String::new();
        let mut f = Family::new(&mut out, "x_total", "counter", "Xs.", "role=\"SINGLE\"");
        f.sample(3);
        f.sample_with("", "method=\"GET\"", 1);
        assert_eq!(
            out,
            "# HELP x_total Xs.\n# TYPE x_total counter\nx_total{role=\"SINGLE\"} 3\n\
             x_total{role=\"SINGLE\",method=\"GET\"} 1\n"
        );
    }

    #[test]
    fn histograms_are_cumulative_with_inf_equal_to_count() {
        static BOUNDS: [f64; 3] = [0.1, 1.0, 60.0];
        let h = Histogram {
            bounds: &BOUNDS,
            buckets: vec![1, 2, 0, 4],
            sum: 300.5,
        };
        let mut out = String::new();
        Family::new(&mut out, "t", "histogram", "T.", "").histogram(
            &h,
            &[0.1, 60.0],
            BoundStyle::Fixed6,
        );
        assert!(out.contains("t_bucket{le=\"0.100000\"} 1\n"));
        assert!(out.contains("t_bucket{le=\"60.000000\"} 3\n"));
        assert!(out.contains("t_bucket{le=\"+Inf\"} 7\n"));
        assert!(out.contains("t_count 7\n"));
        assert!(out.contains("t_sum 300.5\n"));
    }
}
