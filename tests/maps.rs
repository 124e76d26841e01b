//! Terrain maps (docs/maps.md): the material weight kernel against its CPU twin, and the 8-bit
//! levels of the splat maps. GPU tests run with validation on; any message fails.

mod common;

use common::{assert_no_validation_messages, gpu};
use scarp::maps::gpu::Kernels;
use scarp::maps::materials::{to_levels, NAMES};
use scarp::maps::MapsPush;
use scarp::pages::geometry::{DocumentDesc, Units};
use scarp::render::look::PRESETS;

#[test]
fn material_weights_on_the_gpu_match_the_twin_within_an_8_bit_level() {
    let gpu = gpu();
    let kernels = Kernels::new(&gpu).unwrap();
    let (w, h) = (300u32, 200u32);
    // Steep enough for rock, scree in the gullies, sand low and snow high.
    let mut heights = common::fbm_terrain(w, h, 11, 40.0, 6);
    let (lo, hi) = scarp::terrain::formats::min_max(&heights);
    // A flat shore along the left: sand.
    for (i, v) in heights.iter_mut().enumerate() {
        if i as u32 % w < 30 {
            *v = lo;
        }
    }
    let desc = DocumentDesc {
        units: Units {
            texel_size: Some(4.0),
            height_unit: Some(600.0),
            ..Units::default()
        },
        ..common::doc(w, h, 128)
    };
    for (name, m) in PRESETS {
        let p = MapsPush::new(&desc, [w, h], [40, 12], (lo, hi), &m);
        let on_gpu = kernels.weights(&gpu, &heights, &p).unwrap();
        let on_cpu = scarp::maps::cpu::weights_region(&heights, &p);
        let worst = on_gpu
            .iter()
            .zip(&on_cpu)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(
            worst * 255.0 <= 1.0,
            "{name}: GPU and twin differ by {worst}"
        );
        // Every texel's weights sum to 1, and every material shows somewhere on alpine ground.
        let mut most = [0.0f32; 5];
        for t in on_cpu.chunks(5) {
            let sum: f32 = t.iter().sum();
            assert!((sum - 1.0).abs() < 1e-4, "{name}: {t:?}");
            for (m, v) in most.iter_mut().zip(t) {
                *m = m.max(*v);
            }
        }
        if name == "alpine" {
            for (n, m) in NAMES.iter().zip(most) {
                assert!(m > 0.5, "{name}: no {n} (most {m})");
            }
        }
        // The splat levels of every texel sum to 255 exactly.
        for t in on_gpu.chunks(5) {
            let l = to_levels(t);
            assert_eq!(l.iter().map(|&v| u32::from(v)).sum::<u32>(), 255);
        }
    }
    assert_no_validation_messages(&gpu);
}
