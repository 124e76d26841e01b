//! The material weights by rule, the CPU twin of `shaders-glsl/include/materials.glsl` (which the
//! viewport's look and the weight-map kernel share): rock, scree, grass, sand and snow at a point
//! from its slope, altitude and curvature, their edges broken up by value noise. Same operations
//! in the same order as the GLSL, in f32.

use crate::render::look::Materials;

/// The materials in the order of their weights (and of the exported maps).
pub const NAMES: [&str; 5] = ["rock", "scree", "grass", "sand", "snow"];

/// Twin of `hash2`.
fn hash2(p: [f32; 2]) -> f32 {
    let fract = |v: f32| v - v.floor();
    let mut p = [fract(p[0] * 0.1031), fract(p[1] * 0.1030)];
    let d = p[0] * (p[1] + 33.33) + p[1] * (p[0] + 33.33);
    p = [p[0] + d, p[1] + d];
    fract((p[0] + p[1]) * p[0])
}

/// Twin of `valueNoise(p).z`: value noise in 0..1.
pub fn value_noise(p: [f32; 2]) -> f32 {
    let i = [p[0].floor(), p[1].floor()];
    let f = [p[0] - i[0], p[1] - i[1]];
    let u = [
        f[0] * f[0] * (3.0 - 2.0 * f[0]),
        f[1] * f[1] * (3.0 - 2.0 * f[1]),
    ];
    let a = hash2(i);
    let b = hash2([i[0] + 1.0, i[1]]);
    let c = hash2([i[0], i[1] + 1.0]);
    let d = hash2([i[0] + 1.0, i[1] + 1.0]);
    a + (b - a) * u[0] + (c - a) * u[1] + (a - b - c + d) * u[0] * u[1]
}

/// GLSL's smoothstep.
fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// The rules as the shaders take them: (grass slope, rock slope, snow line, sand line) and
/// (snow slope, softness, breakup, scree curvature).
pub fn rules(m: &Materials) -> ([f32; 4], [f32; 4]) {
    (
        [m.grass_slope, m.rock_slope, m.snow_line, m.sand_line],
        [m.snow_slope, m.softness, m.breakup, m.scree_curvature],
    )
}

/// Twin of `materialWeights`: the weights of [`NAMES`] (each 0..1, summing to 1) at slope `deg`
/// (degrees), altitude `alt` (0..1 of the rules' range), curvature `curv` (world units per
/// texel²) and point `xz` (texels).
pub fn weights(
    deg: f32,
    alt: f32,
    curv: f32,
    xz: [f32; 2],
    r0: [f32; 4],
    r1: [f32; 4],
) -> [f32; 5] {
    let soft = r1[1].max(0.01);
    let jitter = (value_noise([xz[0] * 0.02, xz[1] * 0.02]) - 0.5) * 2.0 * r1[2];
    let s = deg + jitter * soft * 1.5;
    let a = alt + jitter * 0.04;
    let mut rock = smoothstep(r0[1] - soft, r0[1] + soft, s);
    let mut scree = smoothstep(r0[0] - soft, r0[0] + soft, s) * (1.0 - rock);
    let steep = smoothstep(r0[0] - soft, r0[0], s);
    let gully = steep * smoothstep(r1[3], 2.0 * r1[3] + 1e-4, curv);
    scree += gully * rock;
    rock *= 1.0 - gully;
    let flat = (1.0 - rock - scree).max(0.0);
    let sand = flat * (1.0 - smoothstep(r0[3] - 0.02, r0[3] + 0.02, a));
    let grass = flat - sand;
    let snow = smoothstep(r0[2] - 0.03, r0[2] + 0.03, a + jitter * 0.03)
        * (1.0 - smoothstep(r1[0] - soft, r1[0] + soft, s));
    let under = 1.0 - snow;
    [
        rock * under,
        scree * under,
        grass * under,
        sand * under,
        snow,
    ]
}

/// 8-bit weights summing to exactly 255: each weight's share rounded down, the levels left
/// given to the largest remainders (ties: the first material).
pub fn to_levels(w: &[f32]) -> Vec<u8> {
    let total: f32 = w.iter().map(|v| v.max(0.0)).sum();
    let shares: Vec<f32> = match total > 0.0 {
        true => w.iter().map(|v| v.max(0.0) / total * 255.0).collect(),
        false => (0..w.len())
            .map(|i| if i == 0 { 255.0 } else { 0.0 })
            .collect(),
    };
    let mut levels: Vec<u8> = shares.iter().map(|s| s.floor() as u8).collect();
    let given: u32 = levels.iter().map(|&l| u32::from(l)).sum();
    let mut order: Vec<usize> = (0..w.len()).collect();
    order.sort_by(|&i, &j| {
        (shares[j] - shares[j].floor()).total_cmp(&(shares[i] - shares[i].floor()))
    });
    for &i in order.iter().take(255usize.saturating_sub(given as usize)) {
        levels[i] += 1;
    }
    levels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_sum_to_1_and_follow_the_rules() {
        let (r0, r1) = rules(&Materials::default());
        for (deg, alt, curv) in [
            (5.0, 0.5, 0.0),
            (35.0, 0.4, 0.0),
            (70.0, 0.3, 0.0),
            (5.0, 0.0, 0.0),
            (5.0, 0.95, 0.0),
        ] {
            let w = weights(deg, alt, curv, [10.0, 20.0], r0, r1);
            let sum: f32 = w.iter().sum();
            assert!((sum - 1.0).abs() < 1e-5, "{w:?}");
        }
        // Flat mid-altitude ground is grass, a cliff rock, low flat ground sand, high flat snow.
        let at = |deg, alt| weights(deg, alt, 0.0, [10.0, 20.0], r0, r1);
        assert!(at(2.0, 0.5)[2] > 0.99);
        assert!(at(80.0, 0.5)[0] > 0.99);
        assert!(at(2.0, 0.0)[3] > 0.99);
        assert!(at(2.0, 0.99)[4] > 0.99);
    }

    #[test]
    fn levels_sum_to_255_exactly() {
        for w in [
            vec![0.2f32, 0.2, 0.2, 0.2, 0.2],
            vec![1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 0.0, 0.0],
            vec![0.0; 5],
            vec![0.999, 0.001, 0.0, 0.0, 0.0],
        ] {
            let l = to_levels(&w);
            assert_eq!(
                l.iter().map(|&v| u32::from(v)).sum::<u32>(),
                255,
                "{w:?} -> {l:?}"
            );
        }
        assert_eq!(to_levels(&[1.0, 0.0]), vec![255, 0]);
        assert_eq!(to_levels(&[0.5, 0.5]), vec![128, 127]);
    }
}
