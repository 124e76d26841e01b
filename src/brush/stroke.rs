//! Strokes to instances. Input samples (document texels, pressure, time) are joined by a
//! centripetal Catmull-Rom spline (no cusps or self-loops between close samples); instances are
//! placed every `spacing x radius` texels of arc length from the first sample, so the same path
//! yields the same instances whatever the input rate. A single-sample stroke yields exactly one
//! instance at that sample. Pressure is interpolated along each segment.

use super::{BrushSettings, BrushType};
use crate::brush::shared::BrushInstance;

/// One input sample of a stroke.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StrokeSample {
    pub x: f32,
    pub y: f32,
    #[serde(default = "one")]
    pub pressure: f32,
    #[serde(default)]
    pub t: f32,
}

fn one() -> f32 {
    1.0
}

type P2 = [f64; 2];

fn dist(a: P2, b: P2) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
}

fn lerp(a: P2, b: P2, t: f64) -> P2 {
    [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t]
}

/// Point at u in [0, 1] of the centripetal Catmull-Rom segment p1 -> p2 (Barry-Goldman).
fn catmull_rom(p0: P2, p1: P2, p2: P2, p3: P2, u: f64) -> P2 {
    let knot = |a: P2, b: P2| dist(a, b).sqrt().max(1e-9);
    let t0 = 0.0;
    let t1 = t0 + knot(p0, p1);
    let t2 = t1 + knot(p1, p2);
    let t3 = t2 + knot(p2, p3);
    let t = t1 + (t2 - t1) * u;
    let a1 = lerp(p0, p1, (t - t0) / (t1 - t0));
    let a2 = lerp(p1, p2, (t - t1) / (t2 - t1));
    let a3 = lerp(p2, p3, (t - t2) / (t3 - t2));
    let b1 = lerp(a1, a2, (t - t0) / (t2 - t0));
    let b2 = lerp(a2, a3, (t - t1) / (t3 - t1));
    lerp(b1, b2, (t - t1) / (t2 - t1))
}

/// Instances of `brush` along `samples` (validated by the caller).
pub fn stroke_instances(brush: &BrushSettings, samples: &[StrokeSample]) -> Vec<BrushInstance> {
    stroke_instances_settled(brush, samples).0
}

/// Like [`stroke_instances`], and how many of the instances are settled: later samples cannot
/// change them (they lie before the last segment, whose shape depends on the next sample). A
/// stroke painted live emits its settled instances as they come and the rest when it ends; the
/// concatenation equals [`stroke_instances`] of the whole stroke.
pub fn stroke_instances_settled(
    brush: &BrushSettings,
    samples: &[StrokeSample],
) -> (Vec<BrushInstance>, usize) {
    let strength = brush.signed_strength();
    let make = |p: P2, pressure: f64, direction: f64| BrushInstance {
        center: [p[0] as f32, p[1] as f32],
        radius: brush.radius,
        inner_radius: brush.inner_radius,
        strength: strength * pressure as f32,
        direction: direction as f32,
        axis: {
            // The angle is relative to the stroke, except for stamps that do not follow it.
            let relative_to = if brush.brush == BrushType::Stamp && !brush.stamp_follow {
                0.0
            } else {
                direction
            };
            let a = relative_to + f64::from(brush.dir_angle_deg).to_radians();
            [a.cos() as f32, a.sin() as f32]
        },
    };
    // Drop repeated positions: they add no path (their pressure is the later one's).
    let mut pts: Vec<(P2, f64)> = Vec::with_capacity(samples.len());
    for s in samples {
        let p = [f64::from(s.x), f64::from(s.y)];
        match pts.last_mut() {
            Some(last) if dist(last.0, p) < 1e-6 => last.1 = f64::from(s.pressure),
            _ => pts.push((p, f64::from(s.pressure))),
        }
    }
    let Some(&(first, first_pressure)) = pts.first() else {
        return (Vec::new(), 0);
    };
    if pts.len() == 1 {
        return (vec![make(first, first_pressure, 0.0)], 0);
    }
    // Each instance carries the local stroke direction (directional brushes).
    let first_direction = (pts[1].0[1] - first[1]).atan2(pts[1].0[0] - first[0]);
    let mut out = vec![make(first, first_pressure, first_direction)];
    let mut direction = first_direction;
    let spacing = f64::from(brush.spacing) * f64::from(brush.radius);
    let n = pts.len();
    let at = |i: isize| -> P2 {
        // Mirror the ends so the first and last segments have tangents.
        if i < 0 {
            let (a, b) = (pts[0].0, pts[1].0);
            [2.0 * a[0] - b[0], 2.0 * a[1] - b[1]]
        } else if i as usize >= n {
            let (a, b) = (pts[n - 1].0, pts[n - 2].0);
            [2.0 * a[0] - b[0], 2.0 * a[1] - b[1]]
        } else {
            pts[i as usize].0
        }
    };
    // Walk the spline in small chords, emitting an instance at every `spacing` of arc length.
    let mut next = spacing;
    let snap = spacing * 1e-2;
    let mut travelled = 0.0;
    let mut settled = 0;
    for i in 0..n - 1 {
        if i + 2 == n && n >= 3 {
            settled = out.len();
        }
        let (p0, p1, p2, p3) = (
            at(i as isize - 1),
            at(i as isize),
            at(i as isize + 1),
            at(i as isize + 2),
        );
        let (w0, w1) = (pts[i].1, pts[i + 1].1);
        // Chords of at most 1/8 texel keep the arc-length error far below a texel.
        let steps = ((dist(p1, p2) * 8.0).ceil() as usize).clamp(4, 1 << 20);
        let mut prev = p1;
        for k in 1..=steps {
            let u = k as f64 / steps as f64;
            let cur = catmull_rom(p0, p1, p2, p3, u);
            let len = dist(prev, cur);
            if len > 0.0 {
                direction = (cur[1] - prev[1]).atan2(cur[0] - prev[0]);
            }
            while travelled + len >= next && len > 0.0 {
                let f = (next - travelled) / len;
                let pos = lerp(prev, cur, f);
                let uu = (k as f64 - 1.0 + f) / steps as f64;
                out.push(make(pos, w0 + (w1 - w0) * uu, direction));
                next += spacing;
            }
            travelled += len;
            prev = cur;
        }
    }
    // An instance due within `snap` past the path's end is emitted at the end: otherwise a path
    // whose length is a multiple of the spacing would gain or lose its last instance with
    // rounding, and so with the input rate.
    // A ramp ends exactly where it was dragged to (its slope runs between its end instances):
    // at the end, unless its last instance is there already.
    let last_at = next - spacing;
    if next - travelled <= snap || (brush.brush == BrushType::Ramp && travelled - last_at > snap) {
        let (end, pressure) = pts[n - 1];
        out.push(make(end, pressure, direction));
    }
    (out, settled)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brush::{BrushSettings, BrushType};

    fn brush() -> BrushSettings {
        BrushSettings {
            radius: 40.0,
            spacing: 0.25,
            ..BrushSettings::new(BrushType::Raise)
        }
    }

    fn sample(x: f32, y: f32) -> StrokeSample {
        StrokeSample {
            x,
            y,
            pressure: 1.0,
            t: 0.0,
        }
    }

    #[test]
    fn settled_instances_never_change_as_the_stroke_grows() {
        let samples: Vec<StrokeSample> = (0..40)
            .map(|i| {
                let t = i as f32 * 0.3;
                sample(
                    100.0 + 30.0 * t + 20.0 * t.sin(),
                    80.0 + 25.0 * (0.7 * t).cos() * t,
                )
            })
            .collect();
        let full = stroke_instances(&brush(), &samples);
        // Emit as a live stroke does: settled instances as samples arrive, the rest at the end.
        let mut emitted: Vec<BrushInstance> = Vec::new();
        for k in 1..=samples.len() {
            let (inst, settled) = stroke_instances_settled(&brush(), &samples[..k]);
            assert_eq!(
                &inst[..emitted.len().min(settled)],
                &emitted[..emitted.len().min(settled)]
            );
            if settled > emitted.len() {
                emitted.extend_from_slice(&inst[emitted.len()..settled]);
            }
        }
        let (last, _) = stroke_instances_settled(&brush(), &samples);
        emitted.extend_from_slice(&last[emitted.len()..]);
        assert_eq!(emitted, full);
        assert!(full.len() > 20);
    }

    #[test]
    fn one_sample_gives_one_instance_there() {
        let inst = stroke_instances(&brush(), &[sample(10.5, 20.0)]);
        assert_eq!(inst.len(), 1);
        assert_eq!(inst[0].center, [10.5, 20.0]);
        assert_eq!(inst[0].strength, 0.5);
    }

    #[test]
    fn straight_line_instances_are_evenly_spaced() {
        let inst = stroke_instances(
            &brush(),
            &[sample(0.0, 0.0), sample(37.0, 0.0), sample(100.0, 0.0)],
        );
        // 100 texels at 10-texel spacing: 0, 10, ..., 100.
        assert_eq!(inst.len(), 11);
        for (i, b) in inst.iter().enumerate() {
            assert!(
                (b.center[0] - 10.0 * i as f32).abs() < 1e-3 && b.center[1].abs() < 1e-6,
                "{i}: {:?}",
                b.center
            );
        }
    }

    #[test]
    fn input_rate_does_not_change_instances() {
        // A quarter circle of radius 300 traced in one second at 30 Hz and at 240 Hz.
        let path = |hz: usize| -> Vec<StrokeSample> {
            (0..=hz)
                .map(|i| {
                    let a = std::f32::consts::FRAC_PI_2 * i as f32 / hz as f32;
                    StrokeSample {
                        x: 300.0 * a.cos(),
                        y: 300.0 * a.sin(),
                        pressure: 0.5 + 0.5 * a.sin(),
                        t: i as f32 / hz as f32,
                    }
                })
                .collect()
        };
        let (slow, fast) = (
            stroke_instances(&brush(), &path(30)),
            stroke_instances(&brush(), &path(240)),
        );
        assert_eq!(slow.len(), fast.len());
        for (a, b) in slow.iter().zip(&fast) {
            let d =
                ((a.center[0] - b.center[0]).powi(2) + (a.center[1] - b.center[1]).powi(2)).sqrt();
            assert!(d < 0.05, "instances differ by {d} texels");
            assert!((a.strength - b.strength).abs() < 1e-3);
        }
    }

    #[test]
    fn lower_brush_pushes_down_with_pressure() {
        let b = BrushSettings {
            brush: BrushType::Lower,
            ..brush()
        };
        let inst = stroke_instances(
            &b,
            &[StrokeSample {
                x: 0.0,
                y: 0.0,
                pressure: 0.25,
                t: 0.0,
            }],
        );
        assert_eq!(inst[0].strength, -0.125);
    }
}
