//! `scarp bench --compare OLD.json NEW.json`: per-measurement ratios of two reports of the same
//! schema and device, each judged against a noise band from the repeats, regressions flagged.
//!
//! A measurement's band is the larger of the two reports' spreads (noise and brushes: (slowest -
//! fastest) / median of the repeats; frames: three standard errors of the mean), at least
//! [`MIN_BAND`]; where neither report recorded one (older reports, ceilings, paging) it is
//! [`DEFAULT_BAND`]. A time that grew by more than its band, or a rate that fell by more, is a
//! regression; the reverse an improvement; the rest is within noise.

use super::Report;
use std::fmt::Write as _;

/// Band of a measurement whose reports recorded no spread.
pub const DEFAULT_BAND: f64 = 0.05;
/// Smallest band: repeats that agree closely still vary between runs.
pub const MIN_BAND: f64 = 0.01;

/// Why two reports cannot be compared.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CompareError {
    #[error("the reports have different schemas ({old} and {new}): compare reports of one Scarp version")]
    Schema { old: u32, new: u32 },
    #[error("the reports were measured on different devices ({old:?} and {new:?}): ratios across devices mean nothing")]
    Device { old: String, new: String },
    #[error("the reports share no measurement")]
    Nothing,
}

/// What a measurement's ratio says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Regression,
    Improvement,
    WithinNoise,
}

/// One measurement in both reports.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Measurement and quantity, e.g. `brush/raise/r64/b16/p512/r32f us_per_instance`.
    pub name: String,
    pub old: f64,
    pub new: f64,
    /// new / old.
    pub ratio: f64,
    /// Higher values are better (rates) rather than lower (times).
    pub higher_is_better: bool,
    pub band: f64,
    pub verdict: Verdict,
}

/// Every shared measurement, in report order, and those only one report has.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub old_commit: String,
    pub new_commit: String,
    pub device: String,
    pub rows: Vec<Row>,
    pub only_old: Vec<String>,
    pub only_new: Vec<String>,
}

impl Comparison {
    pub fn regressions(&self) -> impl Iterator<Item = &Row> {
        self.rows
            .iter()
            .filter(|r| r.verdict == Verdict::Regression)
    }
}

/// One quantity of a report: name, value, higher is better, spread of its repeats (0: none).
type Quantity = (String, f64, bool, f64);

/// The quantities `--compare` looks at.
fn quantities(r: &Report) -> Vec<Quantity> {
    let mut q: Vec<Quantity> = Vec::new();
    let c = &r.ceilings;
    q.push((
        "ceiling/copy_image gb_s".into(),
        c.copy_image.gb_s,
        true,
        0.0,
    ));
    q.push((
        "ceiling/copy_buffer gb_s".into(),
        c.copy_buffer.gb_s,
        true,
        0.0,
    ));
    if let Some(w) = &c.copy_image_wave {
        q.push(("ceiling/copy_image_wave gb_s".into(), w.gb_s, true, 0.0));
    }
    if let Some(w) = &c.copy_image_wave_pages {
        q.push((
            "ceiling/copy_image_wave_pages gb_s".into(),
            w.gb_s,
            true,
            0.0,
        ));
    }
    q.push(("ceiling/fma gflop_s".into(), c.fma.gflop_s, true, 0.0));
    if let Some(n) = &r.noise {
        for k in &n.kinds {
            q.push((format!("{} gpu_ms", k.name), k.gpu_ms, false, k.gpu_spread));
            q.push((format!("{} cpu_twin_ms", k.name), k.cpu_twin_ms, false, 0.0));
        }
    }
    if let Some(b) = &r.brushes {
        for x in &b.results {
            let name = format!("{} us_per_instance", x.name);
            q.push((name, x.us_per_instance, false, x.gpu_spread));
        }
    }
    for f in r.frames.iter().flatten() {
        q.push((
            format!("{} mean_ms", f.name),
            f.mean_ms,
            false,
            f.mean_spread,
        ));
        q.push((format!("{} gpu_draw_ms", f.name), f.gpu_draw_ms, false, 0.0));
        q.push((
            format!("{} gpu_shade_ms", f.name),
            f.gpu_shade_ms,
            false,
            0.0,
        ));
    }
    if let Some(p) = &r.paging {
        q.push(("paging page_in_gb_s".into(), p.page_in_gb_s, true, 0.0));
        q.push(("paging page_out_gb_s".into(), p.page_out_gb_s, true, 0.0));
    }
    // Unmeasured quantities (0: no timestamps, a section's missing part) are not compared.
    q.retain(|x| x.1 > 0.0 && x.1.is_finite());
    q
}

/// Compares `new` against `old`; refuses reports of different schemas or devices.
pub fn compare(old: &Report, new: &Report) -> Result<Comparison, CompareError> {
    if old.schema != new.schema {
        return Err(CompareError::Schema {
            old: old.schema,
            new: new.schema,
        });
    }
    let device = |r: &Report| format!("{} ({})", r.system.device, r.system.driver);
    if device(old) != device(new) {
        return Err(CompareError::Device {
            old: device(old),
            new: device(new),
        });
    }
    let (a, b) = (quantities(old), quantities(new));
    let mut rows = Vec::new();
    for (name, o, higher, so) in &a {
        let Some((_, n, _, sn)) = b.iter().find(|x| &x.0 == name) else {
            continue;
        };
        let band = match so.max(*sn) {
            s if s > 0.0 => s.max(MIN_BAND),
            _ => DEFAULT_BAND,
        };
        let ratio = n / o;
        // Oriented so that above 1 is worse.
        let worse = if *higher { o / n } else { ratio };
        let verdict = if worse > 1.0 + band {
            Verdict::Regression
        } else if worse < 1.0 / (1.0 + band) {
            Verdict::Improvement
        } else {
            Verdict::WithinNoise
        };
        rows.push(Row {
            name: name.clone(),
            old: *o,
            new: *n,
            ratio,
            higher_is_better: *higher,
            band,
            verdict,
        });
    }
    if rows.is_empty() {
        return Err(CompareError::Nothing);
    }
    let only = |x: &[Quantity], y: &[Quantity]| -> Vec<String> {
        x.iter()
            .filter(|q| !y.iter().any(|p| p.0 == q.0))
            .map(|q| q.0.clone())
            .collect()
    };
    Ok(Comparison {
        old_commit: old.system.commit.clone(),
        new_commit: new.system.commit.clone(),
        device: device(new),
        only_old: only(&a, &b),
        only_new: only(&b, &a),
        rows,
    })
}

fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Regression => "REGRESSION",
        Verdict::Improvement => "faster",
        Verdict::WithinNoise => "within noise",
    }
}

/// The comparison as a Markdown table (what `--md` writes and the terminal shows).
pub fn markdown(c: &Comparison) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Bench comparison: {} -> {} on {}\n",
        c.old_commit, c.new_commit, c.device
    );
    let _ = writeln!(
        s,
        "new/old per measurement; a time above 1 + band or a rate below 1 / (1 + band) is a regression.\n"
    );
    let _ = writeln!(s, "| measurement | old | new | new/old | band | verdict |");
    let _ = writeln!(s, "|---|---:|---:|---:|---:|---|");
    for r in &c.rows {
        let _ = writeln!(
            s,
            "| {}{} | {:.4} | {:.4} | {:.3} | ±{:.1}% | {} |",
            r.name,
            if r.higher_is_better { " (rate)" } else { "" },
            r.old,
            r.new,
            r.ratio,
            r.band * 100.0,
            verdict_word(r.verdict)
        );
    }
    let n = c.regressions().count();
    let _ = writeln!(
        s,
        "\n{n} regression{} beyond the noise band.",
        if n == 1 { "" } else { "s" }
    );
    for (label, names) in [("only in old", &c.only_old), ("only in new", &c.only_new)] {
        if !names.is_empty() {
            let _ = writeln!(s, "{label}: {}", names.join(", "));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(c: &Comparison, name: &str) -> Row {
        c.rows.iter().find(|r| r.name == name).unwrap().clone()
    }

    #[test]
    fn verdicts_follow_the_band_and_the_direction() {
        let json = include_str!("../../tests/fixtures/bench-report.json");
        let old: Report = serde_json::from_str(json).unwrap();
        let mut new = old.clone();
        // A time 30% slower, a rate 30% lower, a time 30% faster, a time within its band.
        let kinds = &mut new.noise.as_mut().unwrap().kinds;
        kinds[0].gpu_ms *= 1.3;
        kinds[1].gpu_ms *= 1.0 + 0.5 * kinds[1].gpu_spread.max(MIN_BAND);
        new.ceilings.copy_image.gb_s *= 0.7;
        new.ceilings.fma.gflop_s *= 1.3;
        let c = compare(&old, &new).unwrap();
        let k0 = format!("{} gpu_ms", old.noise.as_ref().unwrap().kinds[0].name);
        let k1 = format!("{} gpu_ms", old.noise.as_ref().unwrap().kinds[1].name);
        assert_eq!(row(&c, &k0).verdict, Verdict::Regression);
        assert_eq!(row(&c, &k1).verdict, Verdict::WithinNoise);
        assert_eq!(
            row(&c, "ceiling/copy_image gb_s").verdict,
            Verdict::Regression
        );
        assert_eq!(row(&c, "ceiling/fma gflop_s").verdict, Verdict::Improvement);
        assert_eq!(c.regressions().count(), 2);
        assert!(markdown(&c).contains("2 regressions"));
    }

    #[test]
    fn different_devices_and_schemas_are_refused() {
        let json = include_str!("../../tests/fixtures/bench-report.json");
        let old: Report = serde_json::from_str(json).unwrap();
        let mut other = old.clone();
        other.system.device = "Some Other GPU".into();
        assert!(matches!(
            compare(&old, &other),
            Err(CompareError::Device { .. })
        ));
        let mut other = old.clone();
        other.schema += 1;
        assert!(matches!(
            compare(&old, &other),
            Err(CompareError::Schema { .. })
        ));
    }
}
