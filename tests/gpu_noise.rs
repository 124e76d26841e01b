//! GPU noise against its CPU twin, table upload and lattice properties (the CPU/GPU struct layout:
//! tests/shared_layout.rs).
//! Every test runs with validation (synchronization included) and fails on any message.

mod common;

use common::{assert_no_validation_messages, gpu, Rng};
use scarp::noise::{CpuTables, GpuNoise, NoiseKind, NoiseSettings, NoiseTables};

/// Largest |GPU - CPU| / max(1, |CPU|) we accept anywhere, for every kind: 1e-4 absolute for
/// heights within [-1, 1], relative beyond (octave sums and T_post powers reach well above 1, and
/// f32 error scales with the value).
const TOLERANCE: f32 = 1e-4;
/// Random parameter sets per kind (the first uses the defaults).
const TRIALS: usize = 40;

/// max over samples of |got - want| / max(1, |want|).
fn max_scaled_diff(got: &[f32], want: &[f32]) -> f32 {
    assert_eq!(got.len(), want.len());
    got.iter()
        .zip(want)
        .map(|(g, w)| (g - w).abs() / w.abs().max(1.0))
        .fold(0.0, f32::max)
}

fn random_settings(kind: NoiseKind, rng: &mut Rng, max_offset: f32) -> NoiseSettings {
    let mut s = NoiseSettings::new(kind);
    s.scale = rng.range(0.002, 0.3) * if rng.chance(0.2) { -1.0 } else { 1.0 };
    s.offset = [
        rng.range(-max_offset, max_offset),
        rng.range(-max_offset, max_offset),
    ];
    s.seed = rng.int(-1000, 1000);
    // The texts' working ranges: lacunarity just under 2, up to ~log(size)/log(lacunarity)
    // octaves. Much rougher settings (lacunarity * gain > 1 over 12 octaves) put the finest octave
    // thousands of cells per unit, where one ulp of position is a visible part of a cell.
    s.octaves = rng.int(1, 10);
    s.lacunarity = rng.range(1.7, 2.1);
    s.gain = rng.range(0.3, 0.6);
    s.warp = rng.range(0.0, 0.4);
    s.gain1 = rng.range(0.5, 1.0);
    s.warp0 = rng.range(0.0, 0.5);
    s.damp0 = rng.range(0.0, 1.5);
    s.damp = rng.range(0.0, 1.0);
    s.damp_scale = rng.range(0.0, 1.0);
    // Erosive feeds its gradient back into its positions; far above the paper's 0.15 the map
    // expands and f32 rounding differences grow chaotically from octave to octave.
    s.alpha = rng.range(0.0, 0.2);
    s.beta = rng.range(0.5, 2.0);
    if rng.chance(0.4) {
        s.prewarp_amount = rng.range(-0.5, 0.5);
        s.prewarp_scale = rng.range(0.1, 2.0);
        s.prewarp_octaves = rng.int(1, 5);
    }
    if rng.chance(0.4) {
        s.power = rng.range(1.0, 3.0);
    }
    s.validate().expect("random settings are valid");
    s
}

/// Compares every kind on `TRIALS` random parameter sets with offsets up to `max_offset`;
/// returns the worst scaled difference.
fn compare_every_kind(max_offset: f32, tolerance: f32, seed: u64) {
    let gpu = gpu();
    let tables = NoiseTables::default();
    let cpu = CpuTables::new(&tables);
    let mut noise = GpuNoise::new(&gpu, &tables).unwrap();
    let mut rng = Rng(seed);
    for kind in NoiseKind::ALL {
        let mut worst = 0.0f32;
        for trial in 0..TRIALS {
            let s = if trial == 0 {
                NoiseSettings::new(kind)
            } else {
                random_settings(kind, &mut rng, max_offset)
            };
            let (w, h) = (37, 29);
            let got = noise.generate(&s, w, h).unwrap().heights;
            let want = cpu.generate(kind, &s.params(), w, h);
            assert!(
                want.iter().all(|v| v.is_finite()),
                "{kind:?} CPU produced non-finite values for {s:?}"
            );
            let diff = max_scaled_diff(&got, &want);
            assert!(
                diff <= tolerance,
                "{kind:?} trial {trial}: max |gpu - cpu| / max(1, |cpu|) = {diff} for {s:?}"
            );
            // Not a constant field: the comparison means something.
            let spread = want.iter().fold(f32::NEG_INFINITY, |m, v| m.max(*v))
                - want.iter().fold(f32::INFINITY, |m, v| m.min(*v));
            assert!(spread > 1e-6, "{kind:?} trial {trial}: flat output");
            worst = worst.max(diff);
        }
        println!("|p| <= {max_offset}: {kind:?}: max |gpu - cpu| / max(1, |cpu|) = {worst:e}");
    }
    assert_no_validation_messages(&gpu);
}

/// Noise-space positions up to 64: a 16384-texel document at the default scale of 1/256.
#[test]
fn gpu_matches_cpu_twin_for_every_kind() {
    compare_every_kind(64.0, TOLERANCE, 0x5CA2_0002);
}

/// Gradients staged in shared memory give exactly the table fetches' (the default) results, for
/// every kind, random parameters and seeds (negative ones included), with non-default tables.
#[test]
fn shared_memory_gradients_equal_table_fetches() {
    let gpu = gpu();
    let tables = NoiseTables::new(77);
    let mut noise = GpuNoise::new(&gpu, &tables).unwrap();
    let mut rng = Rng(0x5CA2_0006);
    for kind in NoiseKind::ALL {
        for trial in 0..4 {
            let s = if trial == 0 {
                NoiseSettings::new(kind)
            } else {
                random_settings(kind, &mut rng, 300.0)
            };
            noise.set_shared_gradients(true);
            let shared = noise.generate(&s, 67, 45).unwrap().heights;
            noise.set_shared_gradients(false);
            let fetched = noise.generate(&s, 67, 45).unwrap().heights;
            assert!(shared.iter().any(|&h| h != 0.0), "{kind:?}: all zero");
            assert_eq!(shared, fetched, "{kind:?} trial {trial}: {s:?}");
        }
    }
    assert_no_validation_messages(&gpu);
}

#[test]
fn chunked_generation_equals_one_dispatch() {
    let gpu = gpu();
    let tables = NoiseTables::default();
    let mut noise = GpuNoise::new(&gpu, &tables).unwrap();
    let s = NoiseSettings {
        octaves: 4,
        ..NoiseSettings::new(NoiseKind::Jordan)
    };
    let whole = noise.generate(&s, 70, 50).unwrap().heights;
    noise.set_chunk_samples(70 * 7);
    let chunked = noise.generate(&s, 70, 50).unwrap().heights;
    assert_eq!(whole, chunked, "row chunks must not change any sample");
    assert_no_validation_messages(&gpu);
}

#[test]
fn perlin_is_zero_at_lattice_points_and_continuous() {
    let gpu = gpu();
    let tables = NoiseTables::default();
    let mut noise = GpuNoise::new(&gpu, &tables).unwrap();
    // Scale 1 from an integer offset: every texel is a lattice point.
    let lattice = NoiseSettings {
        scale: 1.0,
        offset: [-300.0, 17.0],
        ..NoiseSettings::new(NoiseKind::Perlin)
    };
    let values = noise.generate(&lattice, 64, 64).unwrap().heights;
    assert!(
        values.iter().all(|v| v.abs() < 1e-6),
        "non-zero at a lattice point: {:?}",
        values.iter().fold(0.0f32, |m, v| m.max(v.abs()))
    );

    // Fine sampling across many cell edges: neighbours differ by at most |grad| * step.
    let step = 1.0 / 64.0;
    let fine = NoiseSettings {
        scale: step,
        offset: [-3.0, 5.0],
        ..NoiseSettings::new(NoiseKind::Perlin)
    };
    let (w, h) = (512u32, 512u32);
    let v = noise.generate(&fine, w, h).unwrap().heights;
    let max_grad = 1.5 * 4.0; // |n| <= 1.5 * sum of corner terms; generous bound on the slope
    for y in 0..h as usize {
        for x in 1..w as usize {
            let d = (v[y * w as usize + x] - v[y * w as usize + x - 1]).abs();
            assert!(d <= max_grad * step, "jump of {d} at ({x}, {y})");
        }
    }
    assert_no_validation_messages(&gpu);
}

#[test]
fn gpu_holds_exactly_the_tables_scarp_writes() {
    let dir = tempfile::tempdir().unwrap();
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_scarp"))
        .args(["tables", "--out"])
        .arg(dir.path())
        .args(["--table-seed", "77"])
        .status()
        .unwrap();
    assert!(status.success());
    let read = |name: &str| {
        image::open(dir.path().join(name))
            .unwrap()
            .into_rgba8()
            .into_raw()
    };
    let (perm_png, grad_png) = (read("perm.png"), read("grad.png"));

    let gpu = gpu();
    let noise = GpuNoise::new(&gpu, &NoiseTables::new(77)).unwrap();
    let (perm_gpu, grad_gpu) = noise.read_tables().unwrap();
    assert_eq!(
        perm_png, perm_gpu,
        "perm.png differs from the GPU's perm table"
    );
    assert_eq!(
        grad_png, grad_gpu,
        "grad.png differs from the GPU's grad table"
    );
    assert_ne!(
        perm_png,
        NoiseTables::new(78).perm_bytes(),
        "the table seed must matter"
    );
    assert_no_validation_messages(&gpu);
}
