//! Helpers shared by the GPU tests: a validated context and a small deterministic RNG.
#![allow(dead_code)]

use scarp::gpu::{Gpu, GpuOptions};
use scarp::pages::geometry::DocumentDesc;
use std::sync::Arc;

/// A context with VK_LAYER_KHRONOS_validation and synchronization validation on.
pub fn gpu() -> Arc<Gpu> {
    let gpu = Gpu::new(&GpuOptions::for_tests())
        .expect("a Vulkan device with validation layers (run .ci/setup)");
    assert!(gpu.validation_enabled());
    gpu
}

/// Fails the test if validation reported anything.
pub fn assert_no_validation_messages(gpu: &Gpu) {
    assert_eq!(
        gpu.validation_messages(),
        0,
        "validation reported messages (printed above)"
    );
}

/// Runs the `scarp` binary from the repository root with validation on (any validation message
/// then fails the command).
pub fn scarp(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_scarp"))
        .env("SCARP_VALIDATION", "1")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .expect("run scarp")
}

/// Runs `scarp` like [`scarp`] and fails the test, showing its stderr, unless it succeeded.
pub fn scarp_ok(args: &[&str]) -> std::process::Output {
    let out = scarp(args);
    assert!(out.status.success(), "scarp {args:?}: {}", stderr(&out));
    out
}

/// A command's stderr as text.
pub fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// SplitMix64, for reproducible random inputs.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        let u = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * u
    }

    pub fn int(&mut self, lo: i32, hi_inclusive: i32) -> i32 {
        lo + (self.next_u64() % (hi_inclusive - lo + 1) as u64) as i32
    }

    pub fn chance(&mut self, p: f32) -> bool {
        self.range(0.0, 1.0) < p
    }
}

/// An r32f document of `width` x `height` texels, pages of `page_size`, range 0..1.
/// Calls `step` every few milliseconds until it returns true (work that lands on another
/// thread: pairs made ahead, pages read ahead); fails naming `what` after a minute.
pub fn poll_until(what: &str, mut step: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !step() {
        assert!(
            start.elapsed().as_secs() < 60,
            "{what}: not within a minute"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

pub fn doc(width: u32, height: u32, page_size: u32) -> DocumentDesc {
    DocumentDesc {
        page_size,
        ..DocumentDesc::for_heights(width, height)
    }
}

/// A w x h fBm terrain, heights about 0..1: `octaves` of features about `feature` texels
/// across, tables from `seed`.
pub fn fbm_terrain(w: u32, h: u32, seed: u64, feature: f32, octaves: i32) -> Vec<f32> {
    use scarp::noise::{CpuTables, NoiseKind, NoiseSettings, NoiseTables};
    let tables = CpuTables::new(&NoiseTables::new(seed));
    let settings = NoiseSettings {
        scale: 1.0 / feature,
        octaves,
        ..NoiseSettings::new(NoiseKind::Fbm)
    };
    let p = settings.params();
    (0..w * h)
        .map(|i| {
            let q = glam::Vec2::new((i % w) as f32, (i / w) as f32) * p.scale;
            0.5 + 0.5 * tables.noise_at(NoiseKind::Fbm, &p, q.into())
        })
        .collect()
}

/// Largest |a - b| over two equally long grids.
pub fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// Adds an `add` layer called `name` to `doc` (opacity 1, empty) and selects it.
pub fn add_and_select_layer(doc: &mut scarp::document::Document, name: &str) {
    use scarp::layers::{LayerOp, Mode};
    let here = std::path::Path::new(".");
    let add = LayerOp::Add {
        name: name.into(),
        mode: Mode::Add,
        opacity: 1.0,
        files: Default::default(),
    };
    doc.layer_op(&add, here).unwrap();
    doc.layer_op(&LayerOp::Select { name: name.into() }, here)
        .unwrap();
}

/// Two journals of a 128² document with `units` (a JSON object, or empty) written into `dir`:
/// `hill.json`, a raised hill, and `eroded.json`, the same hill then eroded over most of the
/// document (60 steps of both models). Returns their paths.
#[allow(dead_code)]
pub fn hill_journals(
    dir: &std::path::Path,
    units: &str,
) -> (std::path::PathBuf, std::path::PathBuf) {
    let hill = r#"{"stroke": {"brush": {"type": "raise", "radius": 50, "strength": 0.3,
        "falloff": "smooth"}, "samples": [{"x": 64, "y": 64, "pressure": 1.0, "t": 0.0}]}}"#;
    let erode = r#"{"erode": {"region": [8, 8, 112, 112], "model": "both", "steps": 60}}"#;
    let units = match units {
        "" => String::new(),
        u => format!(r#", "units": {u}"#),
    };
    let journal = |steps: &str| {
        format!(
            r#"{{"version": 2, "document": {{"width": 128, "height": 128, "page_size": 128{units}}},
                "steps": [{steps}]}}"#
        )
    };
    let (h, e) = (dir.join("hill.json"), dir.join("eroded.json"));
    std::fs::write(&h, journal(hill)).unwrap();
    std::fs::write(&e, journal(&format!("{hill}, {erode}"))).unwrap();
    (h, e)
}
