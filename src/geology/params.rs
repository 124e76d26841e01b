//! The stream-power model's parameters (docs/geology.md): one struct for `scarp geology`'s
//! flags, the journal's geology step and the editor's panel, in physical units — metres and
//! years — with the documented defaults and the checks that refuse a bad value before any work.

use super::shared::GeologyPush;
use serde::{Deserialize, Serialize};

/// Every parameter of the model; snake_case names are the journal's (`uplift_rate`), and the
/// struct is `scarp geology`'s flags (`--uplift-rate`) too.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default, deny_unknown_fields)]
pub struct GeologyParams {
    /// Uplift rate U, metres per year (times the uplift map, 1 where none is painted).
    #[arg(long, default_value_t = DEFAULTS.uplift_rate)]
    pub uplift_rate: f32,
    /// Erodibility K of the stream-power law e = K·A^m·S^n (per year, times m^(1−2m) for n = 1).
    #[arg(long, default_value_t = DEFAULTS.erodibility)]
    pub erodibility: f32,
    /// Stream-power exponent m of the drainage area A (m²).
    #[arg(long, default_value_t = DEFAULTS.area_exponent)]
    pub area_exponent: f32,
    /// Stream-power exponent n of the slope S.
    #[arg(long, default_value_t = DEFAULTS.slope_exponent)]
    pub slope_exponent: f32,
    /// Hillslope diffusion κ, square metres per year.
    #[arg(long, default_value_t = DEFAULTS.diffusion)]
    pub diffusion: f32,
    /// Time step Δt, years.
    #[arg(long, default_value_t = DEFAULTS.time_step)]
    pub time_step: f32,
    /// Base level, metres of elevation: texels at or below it are outlets (the sea) [default:
    /// only the region's border drains].
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_level: Option<f32>,
    /// Fill depressions before the first iteration, every filled texel at least this slope
    /// (m/m, 0 for flat fills) above the one that drains it: priority-flood with an ε step
    /// (Barnes, Lehman & Mulla 2014) [default: no filling].
    #[arg(long, value_name = "SLOPE")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fill_depressions: Option<f32>,
    /// Route the drainage area to every lower neighbour, each in the share of its slope to this
    /// power (multi-flow; Freeman 1991 takes 1.1) [default: D8, all of it to the receiver].
    #[arg(long, value_name = "EXPONENT")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multi_flow: Option<f32>,
    /// Threshold hillslope, degrees: after each iteration no texel stands above any neighbour
    /// by more than this angle (it is cut down to that height, as a talus sheds), at every
    /// level of the run. Not part of the model, which is the default [default: no
    /// threshold].
    #[arg(long, value_name = "DEGREES")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub critical_slope: Option<f32>,
}

/// The documented defaults (docs/geology.md): 1 mm a year of uplift against an erodibility that
/// makes channels of a square kilometre slope 2 % at steady state (S = (U/K)·A^(−m/n) with U/K =
/// 20 m), m/n = 0.5 as measured in real channels, soil creep of 0.002 m² a year, and 5-year
/// steps: below the stream-power law's explicit limit `Δt·K·A^m/δ ≤ 1` for every river of the
/// default terrain on 1 m texels (past it a channel's slope is set by the step and the texel
/// size, not by the law, and channels move between resolutions), and stable for the creep on
/// texels of 0.2 m and up. On the default terrain these give Hack's exponent 0.58 at 4 m texels
/// and 0.55 at 1 m, no pits, and the same channels at both (docs/geology.md, "Measured").
pub const DEFAULTS: GeologyParams = GeologyParams {
    uplift_rate: 1.0e-3,
    erodibility: 5.0e-5,
    area_exponent: 0.5,
    slope_exponent: 1.0,
    diffusion: 0.002,
    time_step: 5.0,
    base_level: None,
    fill_depressions: None,
    multi_flow: None,
    critical_slope: None,
};

impl Default for GeologyParams {
    fn default() -> Self {
        DEFAULTS
    }
}

/// How far a stationary iteration (`GeologyRun::solve_steady`) moves a texel toward its solved
/// height: damped Jacobi. Undamped (1), the sweeps of the default terrain at 16 m texels fell
/// into a cycle and never reached a measure of 0.01; 0.5 and 0.8 reached it there, 0.7 to 0.9 at
/// 8 m, 0.8 and 0.9 at 4 m (0.6 did not in 50,000 iterations a level; docs/PERF.md, "Geology:
/// solved for the steady state").
pub const RELAXATION: f32 = 0.8;

/// Largest values the checks accept: past them f32 heights overflow or the explicit step is
/// meaningless (docs/geology.md).
pub const MAX_UPLIFT_RATE: f32 = 1.0; // m/yr
pub const MAX_ERODIBILITY: f32 = 1.0;
pub const MAX_EXPONENT: f32 = 4.0;
pub const MAX_TIME_STEP: f32 = 1.0e6; // yr
pub const MAX_FILL_SLOPE: f32 = 1.0; // m/m
/// The critical slope's range, degrees. Below 1° a neighbour's rise can be less than the spacing
/// of f32 heights (0.06 mm under 1,024 m), and the cap would make flats; 90° bounds nothing.
pub const MIN_CRITICAL_SLOPE: f32 = 1.0;
pub const MAX_CRITICAL_SLOPE: f32 = 89.0;

/// Checks an uplift map (row-major, `width` texels a row): every value finite and 0 or more
/// (it multiplies the uplift rate). The error names the first texel that is not, at `origin`
/// plus its place in the map.
pub fn check_uplift(u: &[f32], width: u32, origin: [u32; 2]) -> Result<(), String> {
    match u.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
        None => Ok(()),
        Some(i) => Err(format!(
            "uplift {} at texel ({}, {}): the map's values multiply the uplift rate and must be 0 or more",
            u[i],
            origin[0] + i as u32 % width,
            origin[1] + i as u32 / width
        )),
    }
}

impl GeologyParams {
    pub fn is_default(&self) -> bool {
        *self == DEFAULTS
    }

    /// Checks every value that needs no document; the error names the flag.
    pub fn validate(&self) -> Result<(), String> {
        let within = |name: &str, v: f32, lo_open: bool, lo: f32, hi: f32| {
            let above = if lo_open { v > lo } else { v >= lo };
            if v.is_finite() && above && v <= hi {
                Ok(())
            } else {
                let bracket = if lo_open { "(" } else { "[" };
                Err(format!("--{name} must be in {bracket}{lo}, {hi}], got {v}"))
            }
        };
        within("uplift-rate", self.uplift_rate, false, 0.0, MAX_UPLIFT_RATE)?;
        within("erodibility", self.erodibility, false, 0.0, MAX_ERODIBILITY)?;
        within("area-exponent", self.area_exponent, true, 0.0, MAX_EXPONENT)?;
        within(
            "slope-exponent",
            self.slope_exponent,
            true,
            0.0,
            MAX_EXPONENT,
        )?;
        within("diffusion", self.diffusion, false, 0.0, 1.0e4)?;
        within("time-step", self.time_step, true, 0.0, MAX_TIME_STEP)?;
        if let Some(b) = self.base_level {
            if !b.is_finite() {
                return Err(format!("--base-level must be finite, got {b}"));
            }
        }
        if let Some(e) = self.fill_depressions {
            within("fill-depressions", e, false, 0.0, MAX_FILL_SLOPE)?;
        }
        if let Some(e) = self.multi_flow {
            within("multi-flow", e, true, 0.0, MAX_EXPONENT)?;
        }
        if let Some(deg) = self.critical_slope {
            within(
                "critical-slope",
                deg,
                false,
                MIN_CRITICAL_SLOPE,
                MAX_CRITICAL_SLOPE,
            )?;
        }
        Ok(())
    }

    /// Checks what depends on the texel size `tau` (m): the explicit diffusion step is stable
    /// while Δt·κ/τ² ≤ 1/4.
    pub fn validate_for(&self, tau: f64) -> Result<(), String> {
        self.validate()?;
        let ratio = f64::from(self.time_step) * f64::from(self.diffusion) / (tau * tau);
        if ratio > 0.25 {
            return Err(format!(
                "--time-step {} yr with --diffusion {} m²/yr on {tau} m texels is unstable (Δt·κ/τ² = {ratio:.3}, at most 0.25): take a time step of at most {:.4} yr",
                self.time_step,
                self.diffusion,
                0.25 * tau * tau / f64::from(self.diffusion)
            ));
        }
        Ok(())
    }

    /// The kernels' constants for a `size` region of `tau`-metre texels, the base level given
    /// as z (m above the document's height origin).
    pub fn push(&self, size: [u32; 2], tau: f32, base_z: Option<f32>) -> GeologyPush {
        let steady = self.time_step * self.uplift_rate;
        // tan θ in f64, then each neighbour distance's rise, rounded once here for both sides.
        let tan = self
            .critical_slope
            .map_or(0.0, |deg| f64::from(deg).to_radians().tan());
        let diag = tau * std::f32::consts::SQRT_2;
        GeologyPush {
            size: [size[0] as i32, size[1] as i32],
            tau,
            diag,
            inv_tau: 1.0 / tau,
            inv_diag: 1.0 / diag,
            tau2: tau * tau,
            a0: tau * tau,
            erodibility: self.erodibility,
            m: self.area_exponent,
            n: self.slope_exponent,
            diffusion: self.diffusion,
            dt: self.time_step,
            uplift: self.uplift_rate,
            base_level: base_z.unwrap_or(0.0),
            has_base: i32::from(base_z.is_some()),
            measure: 0,
            steady_unit: if steady > 0.0 { steady } else { self.time_step },
            uniform_uplift: 0,
            multi_flow: i32::from(self.multi_flow.is_some()),
            flow_exponent: self.multi_flow.unwrap_or(1.0),
            critical: i32::from(self.critical_slope.is_some()),
            rise_axis: (tan * f64::from(tau)) as f32,
            rise_diag: (tan * f64::from(diag)) as f32,
            stationary: 0,
            relaxation: RELAXATION,
        }
    }
}

/// A whole run as a journal's geology step, the CLI and the editor ask for it: the parameters,
/// iterations per level (the most per level when running until steady), the steady-state
/// measure to stop at, and the coarse levels iterated first.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GeologyRun {
    pub params: GeologyParams,
    pub iterations: u32,
    pub until_steady: Option<f32>,
    /// Between the measured iterations (every [`crate::geology::gpu::ITERATIONS_PER_SUBMIT`]th
    /// and a level's last), solve each texel's steady-state equation for its height instead of
    /// stepping Δt (docs/geology.md, "Solving for the steady state"): the model's steady state
    /// in far fewer iterations where the level settles, which then says nothing of the years
    /// between. Needs `until_steady` and n = 1.
    pub solve_steady: bool,
    pub coarse: u32,
    /// The run stops after this many iterations over every level (the editor's *stop here*):
    /// finer levels do not run and the heights are carried up from where it stopped.
    pub stop_after: Option<u32>,
}

/// What a run under way is doing, as the editor's panel says it: the years simulated so far, or
/// for a run solving for its steady state (`solve_steady`), which steps no time between its
/// measured iterations, that instead. [`super::run::RunOutput::text`] says how a run ended.
pub fn progress_text(solved: bool, years: f64) -> String {
    match solved {
        true => "solving for the steady state".into(),
        false => format!("{years:.0} years simulated"),
    }
}

/// Most iterations a level may run (a run's count, or its cap when it runs until steady).
pub const MAX_ITERATIONS: u32 = 1_000_000;

/// Most coarse levels below the region.
pub const MAX_COARSE_LEVELS: u32 = 8;

impl Default for GeologyRun {
    fn default() -> Self {
        Self {
            params: DEFAULTS,
            // 100,000 years a level at the default step.
            iterations: 20_000,
            until_steady: None,
            solve_steady: false,
            coarse: 0,
            stop_after: None,
        }
    }
}

impl GeologyRun {
    /// Checks every value that needs no document; the error names the flag.
    pub fn validate(&self) -> Result<(), String> {
        self.params.validate()?;
        if !(1..=MAX_ITERATIONS).contains(&self.iterations) {
            return Err(format!(
                "--iterations must be 1 to {MAX_ITERATIONS}, got {}",
                self.iterations
            ));
        }
        if let Some(t) = self.until_steady {
            if !(t.is_finite() && t > 0.0) {
                return Err(format!("--until-steady must be above 0, got {t}"));
            }
            if self.params.uplift_rate == 0.0 {
                return Err(
                    "--until-steady needs an --uplift-rate above 0 (the measure is in steps of uplift)"
                        .into(),
                );
            }
        }
        if self.solve_steady && self.until_steady.is_none() {
            return Err(
                "--solve-steady needs --until-steady (it finds the steady state, not the years before it)"
                    .into(),
            );
        }
        if self.solve_steady && self.params.slope_exponent != 1.0 {
            return Err(format!(
                "--solve-steady needs --slope-exponent 1 (its sweeps solve a stream-power term linear in the slope), got {}",
                self.params.slope_exponent
            ));
        }
        if self.stop_after == Some(0) {
            return Err("--stop-after must be at least 1 iteration".into());
        }
        if self.coarse > MAX_COARSE_LEVELS {
            return Err(format!(
                "--coarse must be 0 to {MAX_COARSE_LEVELS}, got {}",
                self.coarse
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_uplift_map_below_0_is_refused_at_its_texel() {
        assert_eq!(check_uplift(&[0.0, 1.0, 2.5, 0.0], 2, [10, 20]), Ok(()));
        let e = check_uplift(&[1.0, 1.0, 1.0, -0.5], 2, [10, 20]).unwrap_err();
        assert!(e.starts_with("uplift -0.5 at texel (11, 21)"), "{e}");
        assert!(check_uplift(&[f32::NAN], 1, [0, 0]).is_err());
    }

    /// Past `Δt·K·A^m/δ ≈ 1` a channel is held one step of uplift above its receiver and its
    /// slope follows the step, not the law (docs/geology.md, "Stability"): the default step
    /// keeps a river draining the whole default terrain (4.1 km square, 1 m texels) at about
    /// that limit, and a river of 1 km² well below it.
    #[test]
    fn the_default_step_keeps_the_default_terrains_rivers_within_the_explicit_limit() {
        let d = DEFAULTS;
        let limit = |area_m2: f32| d.time_step * d.erodibility * area_m2.powf(d.area_exponent);
        assert!(limit(4096.0 * 4096.0) <= 1.03, "{}", limit(4096.0 * 4096.0));
        assert!(limit(1.0e6) <= 0.26, "{}", limit(1.0e6));
    }

    #[test]
    fn bad_parameters_are_refused_by_name() {
        let bad = [
            (
                GeologyParams {
                    erodibility: -1e-5,
                    ..DEFAULTS
                },
                "--erodibility",
            ),
            (
                GeologyParams {
                    area_exponent: 0.0,
                    ..DEFAULTS
                },
                "--area-exponent",
            ),
            (
                GeologyParams {
                    slope_exponent: -1.0,
                    ..DEFAULTS
                },
                "--slope-exponent",
            ),
            (
                GeologyParams {
                    time_step: 0.0,
                    ..DEFAULTS
                },
                "--time-step",
            ),
            (
                GeologyParams {
                    uplift_rate: f32::NAN,
                    ..DEFAULTS
                },
                "--uplift-rate",
            ),
            (
                GeologyParams {
                    diffusion: -0.1,
                    ..DEFAULTS
                },
                "--diffusion",
            ),
            (
                GeologyParams {
                    fill_depressions: Some(-1e-3),
                    ..DEFAULTS
                },
                "--fill-depressions",
            ),
            (
                GeologyParams {
                    fill_depressions: Some(f32::INFINITY),
                    ..DEFAULTS
                },
                "--fill-depressions",
            ),
            (
                GeologyParams {
                    multi_flow: Some(0.0),
                    ..DEFAULTS
                },
                "--multi-flow",
            ),
            (
                GeologyParams {
                    critical_slope: Some(90.0),
                    ..DEFAULTS
                },
                "--critical-slope",
            ),
            (
                GeologyParams {
                    critical_slope: Some(0.5),
                    ..DEFAULTS
                },
                "--critical-slope",
            ),
            (
                GeologyParams {
                    base_level: Some(f32::INFINITY),
                    ..DEFAULTS
                },
                "--base-level",
            ),
        ];
        for (p, name) in bad {
            let e = p.validate().unwrap_err();
            assert!(e.starts_with(name), "{e}");
        }
        assert!(DEFAULTS.validate().is_ok());
        // Stable on 0.25 m texels at the default step, unstable on 0.1 m ones.
        assert!(DEFAULTS.validate_for(0.25).is_ok());
        let e = DEFAULTS.validate_for(0.1).unwrap_err();
        assert!(e.contains("unstable"), "{e}");
    }
}
