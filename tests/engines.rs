//! Exports engines take as they are (docs/engines.md): `scarp export` for Unreal, Unity and
//! Godot's Terrain3D, read back as the engines read them — heights within one 16-bit level (or
//! exact metres), splat levels summing to 255, Terrain3D's control bits, the numbers in the
//! note — a glTF mesh for other tools, read back by an independent reader and, where it is
//! installed, passed by the Khronos validator — and bad flags refused before anything is written.

mod common;

use common::{assert_no_validation_messages, scarp, scarp_ok, stderr};
use scarp::terrain::engines::{Engine, Fit, Plan};
use scarp::terrain::formats::{read, Heights, ReadOptions};

const SIDE: u32 = 300;
const TEXEL: f64 = 5.0;
const UNIT: f64 = 800.0;

/// A `SIDE`² fbm terrain in a .r32 with its units in a sidecar (written by `scarp convert`).
fn input(dir: &std::path::Path) -> (std::path::PathBuf, Heights) {
    let values = common::fbm_terrain(SIDE, SIDE, 21, 50.0, 6);
    let raw = dir.join("raw.r32");
    scarp::terrain::export::write_heights(&raw, SIDE, SIDE, &values).unwrap();
    let file = dir.join("land.r32");
    scarp_ok(&[
        "convert",
        raw.to_str().unwrap(),
        file.to_str().unwrap(),
        "--texel-size",
        &TEXEL.to_string(),
        "--height-unit",
        &UNIT.to_string(),
    ]);
    let grid = Heights {
        width: SIDE,
        height: SIDE,
        values,
    };
    (file, grid)
}

fn export(file: &std::path::Path, engine: &str, out: &std::path::Path, more: &[&str]) -> String {
    let mut args = vec![
        "export",
        "--heights",
        file.to_str().unwrap(),
        "--engine",
        engine,
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(more);
    String::from_utf8_lossy(&scarp_ok(&args).stdout).into_owned()
}

fn png(path: &std::path::Path) -> image::DynamicImage {
    image::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn unreal_gets_a_recommended_size_its_scales_and_a_weight_map_per_material() {
    let dir = tempfile::tempdir().unwrap();
    let (file, grid) = input(dir.path());
    let out = dir.path().join("ue");
    let said = export(&file, "unreal", &out, &[]);
    // 300 is nearest to 253 of Unreal's recommended sizes; corner samples kept.
    let plan = Plan::new(Engine::Unreal, Fit::Resample, None, [SIDE, SIDE], TEXEL).unwrap();
    assert_eq!(plan.size, [253, 253]);
    let want = plan.heights(&grid);
    let (lo, hi) = scarp::terrain::formats::min_max(&want.values);
    let img = png(&dir.path().join("ue.png")).into_luma16();
    assert_eq!(img.dimensions(), (253, 253));
    let level = (hi - lo) / 65535.0;
    for (v, w) in img.as_raw().iter().zip(&want.values) {
        let h = lo + f32::from(*v) / 65535.0 * (hi - lo);
        assert!((h - w).abs() <= level, "{h} vs {w}");
    }
    // The note's numbers: X/Y in cm per sample, Z so that 65536 values span the range.
    let spacing_cm = TEXEL * 299.0 / 252.0 * 100.0;
    let range_cm = f64::from(hi - lo) * UNIT * 100.0;
    assert!(
        said.contains(&format!(
            "Scale: X {spacing_cm:.4}  Y {spacing_cm:.4}  Z {:.4}",
            range_cm / 512.0
        )),
        "{said}"
    );
    assert!(
        said.contains("Heightmap File: ue.png (253 x 253, 16-bit PNG)"),
        "{said}"
    );
    // One 8-bit map per material; their levels sum to 255 at every texel.
    let maps: Vec<Vec<u8>> = ["rock", "scree", "grass", "sand", "snow"]
        .iter()
        .map(|m| {
            png(&dir.path().join(format!("ue_{m}.png")))
                .into_luma8()
                .into_raw()
        })
        .collect();
    for i in 0..253 * 253 {
        let sum: u32 = maps.iter().map(|m| u32::from(m[i])).sum();
        assert_eq!(sum, 255);
    }
    assert!(
        maps.iter().filter(|m| m.iter().any(|&v| v > 128)).count() >= 3,
        "materials show"
    );
    // Cropped instead: the document's spacing, a centred window.
    let crop = dir.path().join("crop");
    let said = export(&file, "unreal", &crop, &["--fit", "crop"]);
    assert!(
        said.contains("cropped to 253x253 from texel (23, 23)"),
        "{said}"
    );
    let img = png(&dir.path().join("crop.png")).into_luma16();
    assert_eq!(img.dimensions(), (253, 253));
}

#[test]
fn unreal_world_partition_tiles_stitch_back_to_the_plans_heights() {
    let dir = tempfile::tempdir().unwrap();
    let (file, grid) = input(dir.path());
    let out = dir.path().join("wp");
    let said = export(&file, "unreal", &out, &["--tiles", "2x2"]);
    // 300 in 2 tiles: about 150 a tile, nearest 127: 253 in all.
    let plan = Plan::tiled(
        Engine::Unreal,
        Fit::Resample,
        None,
        [SIDE, SIDE],
        TEXEL,
        (2, 2),
    )
    .unwrap();
    assert_eq!(plan.size, [253, 253]);
    assert!(
        said.contains("Heightmap File: wp_x0_y0.png - the first of 2 x 2 tiles of 127 x 127"),
        "{said}"
    );
    let want = plan.heights(&grid);
    let (lo, hi) = scarp::terrain::formats::min_max(&want.values);
    for (i, j) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
        let t = png(&dir.path().join(format!("wp_x{i}_y{j}.png"))).into_luma16();
        assert_eq!(t.dimensions(), (127, 127));
        for m in ["rock", "scree", "grass", "sand", "snow"] {
            let w = png(&dir.path().join(format!("wp_{m}_x{i}_y{j}.png")));
            assert_eq!((w.width(), w.height()), (127, 127));
        }
    }
    // Stitched back by `scarp convert` (the tiles' sidecars carry their shared range).
    let back = dir.path().join("back.r32");
    let pattern = dir.path().join("wp_x{i}_y{j}.png");
    scarp_ok(&[
        "convert",
        pattern.to_str().unwrap(),
        back.to_str().unwrap(),
        "--tiles",
        "2x2",
    ]);
    let got = read(&back, &ReadOptions::default()).unwrap();
    assert_eq!((got.width, got.height), (253, 253));
    let level = (hi - lo) / 65535.0;
    for (g, w) in got.values.iter().zip(&want.values) {
        assert!((g - w).abs() <= level, "{g} vs {w}");
    }
    // A weight map's tiles agree on their shared column.
    let a = png(&dir.path().join("wp_rock_x0_y0.png")).into_luma8();
    let b = png(&dir.path().join("wp_rock_x1_y0.png")).into_luma8();
    for y in 0..127 {
        assert_eq!(a.get_pixel(126, y), b.get_pixel(0, y), "row {y}");
    }
}

#[test]
fn unity_gets_a_raw_at_2n_plus_1_south_first_and_splat_maps_summing_to_255() {
    let dir = tempfile::tempdir().unwrap();
    let (file, grid) = input(dir.path());
    let out = dir.path().join("un");
    let said = export(&file, "unity", &out, &["--resolution", "257"]);
    let plan = Plan::new(Engine::Unity, Fit::Resample, Some(257), [SIDE, SIDE], TEXEL).unwrap();
    let want = plan.heights(&grid);
    let (lo, hi) = scarp::terrain::formats::min_max(&want.values);
    let bytes = std::fs::read(dir.path().join("un.raw")).unwrap();
    assert_eq!(bytes.len(), 257 * 257 * 2);
    let level = (hi - lo) / 65535.0;
    for (i, c) in bytes.chunks(2).enumerate() {
        // Row 0 of the file is the document's last (south) row.
        let (x, y) = (i % 257, 256 - i / 257);
        let h = lo + f32::from(u16::from_le_bytes([c[0], c[1]])) / 65535.0 * (hi - lo);
        let w = want.values[y * 257 + x];
        assert!((h - w).abs() <= level, "({x}, {y}): {h} vs {w}");
    }
    let size = TEXEL * 299.0;
    assert!(
        said.contains(&format!(
            "Terrain Width: {size:.3}  Terrain Length: {size:.3}  Terrain Height: {:.3}",
            f64::from(hi - lo) * UNIT
        )),
        "{said}"
    );
    let a = png(&dir.path().join("un_splat0.png")).into_rgba8();
    let b = png(&dir.path().join("un_splat1.png")).into_rgba8();
    assert_eq!(
        a.dimensions(),
        (256, 256),
        "control textures are a power of two"
    );
    for (p, q) in a.pixels().zip(b.pixels()) {
        let sum: u32 = p.0.iter().chain(&q.0).map(|&v| u32::from(v)).sum();
        assert_eq!(sum, 255);
        assert_eq!(&q.0[1..], &[0, 0, 0]);
    }
}

#[test]
fn godot_gets_heights_in_metres_and_terrain3d_control_bits() {
    let dir = tempfile::tempdir().unwrap();
    let (file, grid) = input(dir.path());
    let out = dir.path().join("gd");
    let said = export(&file, "godot", &out, &["--backend", "cpu"]);
    assert!(said.contains("Vertex spacing: 5.0000"), "{said}");
    let opts = ReadOptions::default();
    let m = read(&dir.path().join("gd.exr"), &opts).unwrap();
    assert_eq!((m.width, m.height), (SIDE, SIDE));
    for (z, h) in m.values.iter().zip(&grid.values) {
        assert!(
            (f64::from(*z) - f64::from(*h) * UNIT).abs() < 1e-3,
            "{z} vs {h}"
        );
    }
    let c = read(&dir.path().join("gd_control.exr"), &opts).unwrap();
    let mut bases = std::collections::BTreeSet::new();
    for v in &c.values {
        let bits = v.to_bits();
        assert!(bits >> 27 < 5 && (bits >> 22 & 0x1F) < 5, "{bits:#x}");
        assert_eq!(bits & 0x3FFF, 0);
        bases.insert(bits >> 27);
    }
    assert!(bases.len() >= 3, "{bases:?}");
}

#[test]
fn bad_flags_are_refused_by_name_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let (file, _) = input(dir.path());
    let out = dir.path().join("x");
    let cases: [(&[&str], &str); 10] = [
        (
            &["--engine", "unity", "--resolution", "300"],
            "--resolution: unity takes 33, 65",
        ),
        (
            &["--engine", "unreal", "--materials", "lunar"],
            "--materials:",
        ),
        (
            &["--engine", "godot", "--resolution", "257"],
            "--resolution: godot takes any size",
        ),
        (
            &["--engine", "unity", "--fit", "crop", "--resolution", "4097"],
            "--fit crop",
        ),
        (&["--mesh", "--mesh-error", "-1"], "--mesh-error must be"),
        (
            &["--engine", "godot", "--tiles", "2x2"],
            "--tiles: godot takes one file",
        ),
        (
            &["--mesh", "--region", "250,0,100,10"],
            "--region: region 250,0,100,10",
        ),
        (&["--mesh", "--region", "0,0,1,50"], "at least 2x2 texels"),
        (
            &["--engine", "unity", "--mesh", "--mesh-error", "nan"],
            "--mesh-error must be",
        ),
        // 24385² samples: drainage is made over the whole landscape at once.
        (
            &[
                "--engine",
                "unreal",
                "--tiles",
                "3x3",
                "--resolution",
                "8129",
                "--maps",
                "drainage",
                "--mesh",
            ],
            "--maps drainage: a sample's area depends on everything upstream",
        ),
    ];
    for (more, says) in cases {
        let mut args = vec![
            "export",
            "--heights",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(more);
        let o = scarp(&args);
        assert!(!o.status.success(), "{more:?}");
        let e = stderr(&o);
        assert!(e.contains(says), "{more:?}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "one line: {e}");
    }
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('x'))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn maps_beside_the_heights_are_in_their_units() {
    let dir = tempfile::tempdir().unwrap();
    let (file, _) = input(dir.path());
    let out = dir.path().join("m");
    let said = export(
        &file,
        "godot",
        &out,
        &["--maps", "slope,curvature,profile,plan,drainage,wetness"],
    );
    assert!(said.contains("drainage: m_drainage.exr (m²)"), "{said}");
    assert!(said.contains("plan: m_plan.exr (1/m)"), "{said}");
    let opts = ReadOptions::default();
    let map = |n: &str| {
        read(&dir.path().join(format!("m_{n}.exr")), &opts)
            .unwrap()
            .values
    };
    let (slope, curv, area, wet) = (
        map("slope"),
        map("curvature"),
        map("drainage"),
        map("wetness"),
    );
    let a0 = (TEXEL * TEXEL) as f32;
    let n = (SIDE * SIDE) as f32;
    assert!(slope.iter().all(|d| (0.0..90.0).contains(d)));
    assert!(curv.iter().any(|c| *c > 0.0) && curv.iter().any(|c| *c < 0.0));
    // Profile and plan curvature, both signs, finite; where the ground is level, both 0.
    for m in [map("profile"), map("plan")] {
        assert!(m.iter().all(|c| c.is_finite()));
        assert!(m.iter().any(|c| *c > 0.0) && m.iter().any(|c| *c < 0.0));
        for (c, d) in m.iter().zip(&slope) {
            assert!(*d > 0.0 || *c == 0.0, "{c} on level ground");
        }
    }
    assert!(
        area.iter().all(|a| *a >= a0 && *a <= n * a0),
        "D8 areas are a texel to the whole"
    );
    assert!(
        area.iter().any(|a| *a > 100.0 * a0),
        "some texels gather a hundred"
    );
    for ((w, a), d) in wet.iter().zip(&area).zip(&slope) {
        let tan = f64::from(*d).to_radians().tan().max(1e-3);
        let want = (f64::from(*a) / TEXEL / tan).ln();
        assert!((f64::from(*w) - want).abs() < 1e-4, "{w} vs {want}");
    }
}

#[test]
fn a_flat_document_exports_with_a_range_of_one_height_unit() {
    let dir = tempfile::tempdir().unwrap();
    let flat = dir.path().join("flat.r32");
    scarp::terrain::export::write_heights(&flat, 129, 129, &vec![0.25; 129 * 129]).unwrap();
    let said = export(
        &flat,
        "unreal",
        &dir.path().join("f"),
        &["--backend", "cpu"],
    );
    assert!(
        said.contains("Heightmap File: f.png (127 x 127, 16-bit PNG)"),
        "{said}"
    );
    let img = png(&dir.path().join("f.png")).into_luma16();
    assert!(
        img.as_raw().iter().all(|&v| v == 0),
        "the flat height is the range's bottom"
    );
    // Flat ground: no rock, scree or snow; sand and grass share every texel.
    let grass = png(&dir.path().join("f_grass.png")).into_luma8();
    let sand = png(&dir.path().join("f_sand.png")).into_luma8();
    for (g, s) in grass.as_raw().iter().zip(sand.as_raw()) {
        assert_eq!(u32::from(*g) + u32::from(*s), 255);
    }
}

#[test]
fn a_non_square_document_keeps_its_extent_on_each_axis() {
    let dir = tempfile::tempdir().unwrap();
    let values = common::fbm_terrain(300, 180, 5, 40.0, 5);
    let raw = dir.path().join("wide.r32");
    scarp::terrain::export::write_heights(&raw, 300, 180, &values).unwrap();
    let file = dir.path().join("wide.png");
    scarp_ok(&[
        "convert",
        raw.to_str().unwrap(),
        file.to_str().unwrap(),
        "--size",
        "300x180",
        "--texel-size",
        "2",
        "--height-unit",
        "500",
    ]);
    let said = export(&file, "unity", &dir.path().join("u"), &[]);
    // 300x180 of 2 m: 598 m by 358 m edge to edge, on a 257² (nearest to 300) heightmap.
    assert!(said.contains("Heightmap Resolution: 257"), "{said}");
    assert!(
        said.contains("Terrain Width: 598.000  Terrain Length: 358.000"),
        "{said}"
    );
    let said = export(&file, "unreal", &dir.path().join("r"), &[]);
    // Unreal sizes each axis: 253 x 127 (nearest to 180 by ratio: 127 is 0.35 away, 253 0.34).
    let plan = Plan::new(Engine::Unreal, Fit::Resample, None, [300, 180], 2.0).unwrap();
    let [sx, sy] = plan.spacing_m;
    assert!(
        said.contains(&format!("Scale: X {:.4}  Y {:.4}", sx * 100.0, sy * 100.0)),
        "{said}"
    );
    assert!((sx * f64::from(plan.size[0] - 1) - 598.0).abs() < 1e-9);
    assert!((sy * f64::from(plan.size[1] - 1) - 358.0).abs() < 1e-9);
}

/// The Khronos glTF validator's report on `glb` (errors, warnings), where `node` and the
/// validator `.ci/setup` fetches are there; None elsewhere.
fn khronos_validator(glb: &std::path::Path) -> Option<(u64, u64, String)> {
    let module =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/gltf-validator/package");
    if !module.join("index.js").is_file() {
        return None;
    }
    let script = r#"
const v = require(process.argv[1]);
const data = new Uint8Array(require('fs').readFileSync(process.argv[2]));
v.validateBytes(data).then(r => console.log(JSON.stringify(r.issues)), e => { console.error(e); process.exit(2); });
"#;
    let out = std::process::Command::new("node")
        .args(["-e", script])
        .arg(&module)
        .arg(glb)
        .output()
        .ok()?;
    assert!(out.status.success(), "the validator: {}", stderr(&out));
    let issues: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    Some((
        issues["numErrors"].as_u64().unwrap(),
        issues["numWarnings"].as_u64().unwrap(),
        issues["messages"].to_string(),
    ))
}

#[test]
fn a_mesh_reads_back_within_its_bound_in_metres_and_passes_the_validator() {
    let dir = tempfile::tempdir().unwrap();
    let (file, grid) = input(dir.path());
    let out = dir.path().join("valley.v2");
    let said = export_mesh(
        &file,
        &out,
        &["--mesh-error", "2", "--region", "20,30,200,150"],
    );
    let glb = dir.path().join("valley.v2.glb");
    assert!(said.contains("largest error"), "{said}");
    let bytes = std::fs::read(&glb).unwrap();
    // An independent reader (gltf-rs) parses and validates the document.
    let doc = gltf::Gltf::from_slice(&bytes).unwrap_or_else(|e| panic!("gltf: {e}"));
    let blob = doc.blob.as_deref().expect("a binary chunk");
    let mesh = doc.meshes().next().expect("a mesh");
    let prim = mesh.primitives().next().expect("a primitive");
    assert_eq!(prim.mode(), gltf::mesh::Mode::Triangles);
    let reader = prim.reader(|_| Some(blob));
    let positions: Vec<[f32; 3]> = reader.read_positions().unwrap().collect();
    let normals: Vec<[f32; 3]> = reader.read_normals().unwrap().collect();
    let uvs: Vec<[f32; 2]> = reader.read_tex_coords(0).unwrap().into_f32().collect();
    let indices: Vec<u32> = reader.read_indices().unwrap().into_u32().collect();
    assert_eq!(normals.len(), positions.len());
    assert_eq!(uvs.len(), positions.len());
    assert_eq!(indices.len() % 3, 0);
    assert!(indices.iter().all(|&i| (i as usize) < positions.len()));
    // The accessor's bounds are the data's.
    let acc = prim.get(&gltf::Semantic::Positions).unwrap();
    let lo: Vec<f32> = (0..3)
        .map(|k| positions.iter().map(|p| p[k]).fold(f32::INFINITY, f32::min))
        .collect();
    let hi: Vec<f32> = (0..3)
        .map(|k| {
            positions
                .iter()
                .map(|p| p[k])
                .fold(f32::NEG_INFINITY, f32::max)
        })
        .collect();
    let as_f32 = |v: serde_json::Value| -> Vec<f32> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect()
    };
    assert_eq!(as_f32(acc.min().unwrap()), lo);
    assert_eq!(as_f32(acc.max().unwrap()), hi);
    // Vertices are the region's texels in metres from the document's corner: x east, y up.
    let at = |x: u32, y: u32| f64::from(grid.values[(y * SIDE + x) as usize]) * UNIT;
    for (p, t) in positions.iter().zip(&uvs) {
        let (x, y) = (f64::from(p[0]) / TEXEL, f64::from(p[2]) / TEXEL);
        assert!(x.fract() == 0.0 && y.fract() == 0.0, "{p:?}");
        let (x, y) = (x as u32, y as u32);
        assert!((20..220).contains(&x) && (30..180).contains(&y), "{p:?}");
        assert!((f64::from(p[1]) - at(x, y)).abs() < 1e-3, "{p:?}");
        assert!((f64::from(t[0]) - f64::from(x - 20) / 199.0).abs() < 1e-6);
        assert!((f64::from(t[1]) - f64::from(y - 30) / 149.0).abs() < 1e-6);
    }
    // Within 2 m of the heights at sampled texels, found by brute force over the triangles.
    let tris: Vec<[[f64; 3]; 3]> = indices
        .chunks_exact(3)
        .map(|t| {
            t.iter()
                .map(|&i| positions[i as usize].map(f64::from))
                .collect::<Vec<_>>()
                .try_into()
                .unwrap()
        })
        .collect();
    for y in (30..180).step_by(13) {
        for x in (20..220).step_by(11) {
            let q = [f64::from(x) * TEXEL, f64::from(y) * TEXEL];
            let z = tris
                .iter()
                .find_map(|v| {
                    let e = |a: [f64; 3], b: [f64; 3], p: [f64; 2]| {
                        (b[0] - a[0]) * (p[1] - a[2]) - (b[2] - a[2]) * (p[0] - a[0])
                    };
                    let area = e(v[0], v[1], [v[2][0], v[2][2]]);
                    let w =
                        [e(v[1], v[2], q), e(v[2], v[0], q), e(v[0], v[1], q)].map(|w| w / area);
                    w.iter()
                        .all(|&w| w >= -1e-9)
                        .then(|| w[0] * v[0][1] + w[1] * v[1][1] + w[2] * v[2][1])
                })
                .unwrap_or_else(|| panic!("texel ({x}, {y}) not covered"));
            assert!(
                (z - at(x, y)).abs() <= 2.0 + 1e-3,
                "({x}, {y}): {z} vs {}",
                at(x, y)
            );
        }
    }
    match khronos_validator(&glb) {
        Some((errors, warnings, messages)) => {
            assert_eq!((errors, warnings), (0, 0), "{messages}")
        }
        None => eprintln!("the Khronos glTF validator is not installed (.ci/setup fetches it): the structure alone was checked"),
    }
    // Beside an engine's files, with the same region.
    export(
        &file,
        "unity",
        &dir.path().join("both"),
        &["--mesh", "--region", "0,0,129,129"],
    );
    assert!(dir.path().join("both.glb").is_file());
    assert!(dir.path().join("both.raw").is_file());
}

fn export_mesh(file: &std::path::Path, out: &std::path::Path, more: &[&str]) -> String {
    let mut args = vec![
        "export",
        "--heights",
        file.to_str().unwrap(),
        "--mesh",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(more);
    String::from_utf8_lossy(&scarp_ok(&args).stdout).into_owned()
}

/// The weight maps recoloured with the preset's colours are what the viewport's material
/// weights overlay draws: an Unreal export of a 253² document (its size: no resampling) against
/// `scarp render --overlay materials` seen from above, texel by texel (slopes up to about 60°:
/// steeper faces turned from the camera hide behind their crests).
#[test]
fn recoloured_weight_maps_match_the_viewports_material_overlay() {
    let dir = tempfile::tempdir().unwrap();
    let n = 253u32;
    let values = common::fbm_terrain(n, n, 33, 45.0, 3);
    let raw = dir.path().join("raw.r32");
    scarp::terrain::export::write_heights(&raw, n, n, &values).unwrap();
    let file = dir.path().join("land.r32");
    let (texel, unit) = (5.0f32, 200.0f32);
    scarp_ok(&[
        "convert",
        raw.to_str().unwrap(),
        file.to_str().unwrap(),
        "--texel-size",
        &texel.to_string(),
        "--height-unit",
        &unit.to_string(),
    ]);
    let said = export(&file, "unreal", &dir.path().join("ue"), &[]);
    assert!(said.contains("as it is"), "{said}");
    // From straight above (a hair south), true scale: world y = height x unit / texel.
    let vs = unit / texel;
    let (eye, target) = (
        glam::Vec3::new(126.0, 460.0, 129.0),
        glam::Vec3::new(126.0, 0.0, 126.0),
    );
    let size = [1024u32, 1024];
    let image = dir.path().join("overlay.png");
    let camera = format!(
        "{},{},{},{},{},{}",
        eye.x, eye.y, eye.z, target.x, target.y, target.z
    );
    scarp_ok(&[
        "render",
        "--heights",
        file.to_str().unwrap(),
        "--overlay",
        "materials",
        "--no-lighting",
        // Every texel a vertex: the normals and curvatures drawn are the texels' own.
        "--pixel-error",
        "0.01",
        "--max-triangles-per-pixel",
        "0",
        "--camera",
        &camera,
        "--image",
        "1024x1024",
        "--out",
        image.to_str().unwrap(),
    ]);
    let shown = png(&image).into_rgb8();
    let maps: Vec<image::GrayImage> = ["rock", "scree", "grass", "sand", "snow"]
        .iter()
        .map(|m| png(&dir.path().join(format!("ue_{m}.png"))).into_luma8())
        .collect();
    let alpine = scarp::render::look::Materials::load("alpine").unwrap();
    let colours = [
        alpine.rock,
        alpine.scree,
        alpine.grass,
        alpine.sand,
        alpine.snow,
    ];
    let cam = scarp::render::Camera::look_at(eye, target);
    let view_proj = cam.view_proj(size);
    let encode = |c: f32| (c.max(0.0).powf(1.0 / 2.2) * 255.0).round() as i32;
    let (mut diffs, mut nears) = (Vec::new(), Vec::new());
    let mut materials_seen = [false; 5];
    for y in (3..n - 3).step_by(5) {
        for x in (3..n - 3).step_by(5) {
            let h = values[(y * n + x) as usize];
            let p = view_proj * glam::Vec4::new(x as f32, h * vs, y as f32, 1.0);
            let ndc = glam::Vec2::new(p.x / p.w, p.y / p.w);
            let px = ((ndc.x * 0.5 + 0.5) * size[0] as f32) as u32;
            let py = ((ndc.y * 0.5 + 0.5) * size[1] as f32) as u32;
            let got = shown.get_pixel(px, py).0;
            // The recoloured map at the texel, or (where a sharp edge between materials passes
            // within a texel of it: the pixel's centre is not the texel's) a neighbour.
            let recoloured = |x: u32, y: u32| -> Vec<i32> {
                let levels: Vec<f32> = maps
                    .iter()
                    .map(|m| f32::from(m.get_pixel(x, y).0[0]) / 255.0)
                    .collect();
                (0..3)
                    .map(|c| encode((0..5).map(|k| colours[k][c] * levels[k]).sum()))
                    .collect()
            };
            for (k, m) in maps.iter().enumerate() {
                materials_seen[k] |= m.get_pixel(x, y).0[0] > 128;
            }
            let diff = |want: Vec<i32>| {
                (0..3)
                    .map(|c| (i32::from(got[c]) - want[c]).abs())
                    .max()
                    .unwrap()
            };
            let here = diff(recoloured(x, y));
            let near = (y - 1..=y + 1)
                .flat_map(|v| (x - 1..=x + 1).map(move |u| (u, v)))
                .map(|(u, v)| diff(recoloured(u, v)))
                .min()
                .unwrap();
            diffs.push(here);
            nears.push(near);
        }
    }
    diffs.sort_unstable();
    nears.sort_unstable();
    let q = |v: &[i32], q: f64| v[((v.len() - 1) as f64 * q) as usize];
    eprintln!(
        "recolour vs overlay over {} texels: at the texel median {}, p90 {}, max {}; within a texel p99 {}, max {}; materials {materials_seen:?}",
        diffs.len(),
        q(&diffs, 0.5),
        q(&diffs, 0.9),
        q(&diffs, 1.0),
        q(&nears, 0.99),
        q(&nears, 1.0)
    );
    assert!(
        materials_seen.iter().filter(|&&m| m).count() >= 3,
        "{materials_seen:?}"
    );
    // Sharp edges between materials (a few degrees of slope wide) fall between a pixel's
    // centre and its texel's here and there; elsewhere the colours are the same.
    assert!(q(&diffs, 0.5) <= 1, "median {}", q(&diffs, 0.5));
    assert!(q(&diffs, 0.9) <= 6, "p90 {}", q(&diffs, 0.9));
    assert!(
        q(&nears, 0.99) <= 12,
        "within a texel, p99 {}",
        q(&nears, 0.99)
    );
}

/// Issue 39's wear and deposits leave with the heights: a project made by a journal whose
/// erosion ran over a hill exports `--maps wear,deposits` as EXR in metres, equal to the heights'
/// changes through the run times the height unit; a height file (no project) is refused by name.
#[test]
fn a_projects_erosion_wear_and_deposits_export_in_metres() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = |n: &str| d.join(n).to_str().unwrap().to_string();
    common::hill_journals(d, r#"{"texel_size": 2.0, "height_unit": 300.0}"#);
    for (j, out) in [("hill.json", "before.r32"), ("eroded.json", "after.r32")] {
        scarp_ok(&["apply", "--journal", &p(j), "--out", &p(out)]);
    }
    scarp_ok(&[
        "apply",
        "--journal",
        &p("eroded.json"),
        "--out",
        &p("job.scarp"),
    ]);
    let said = export(
        &d.join("job.scarp"),
        "godot",
        &d.join("m"),
        &["--maps", "wear,deposits", "--backend", "cpu"],
    );
    assert!(said.contains("wear: m_wear.exr (m)"), "{said}");
    let opts = ReadOptions::default();
    let grid = |n: &str| read(&d.join(n), &opts).unwrap().values;
    let (before, after) = (grid("before.r32"), grid("after.r32"));
    assert!(before != after, "the erosion changed the hill");
    let (wear, deposits) = scarp::wear::changes(&before, &after, 300.0);
    for (name, want) in [("m_wear.exr", wear), ("m_deposits.exr", deposits)] {
        let got = grid(name);
        assert_eq!(got.len(), want.len(), "{name}: the document's size");
        assert!(got.iter().any(|&m| m > 0.0), "{name}: some metres");
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (g - w).abs() <= 1e-4 * w.abs().max(1.0),
                "{name}: {g} vs {w}"
            );
        }
    }
    // A height file holds no wear.
    let out = scarp(&[
        "export",
        "--heights",
        &p("after.r32"),
        "--engine",
        "godot",
        "--maps",
        "wear",
        "--out",
        &p("x"),
    ]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && e.contains("--maps wear"), "{e}");
}

/// `DIR/big.scarp`: a `side`² project of 512² pages, flat at 0 but for one raise dab of
/// `radius` at `at`.
fn dabbed_project(d: &std::path::Path, side: u32, radius: u32, at: [u32; 2]) {
    let journal = format!(
        r#"{{"version": 2, "document": {{"width": {side}, "height": {side},
        "page_size": 512, "height_min": 0.0, "height_max": 1.0, "initial": {{"flat": 0.0}}}},
      "steps": [{{"stroke": {{"brush": {{"type": "raise", "radius": {radius}, "inner_radius": 0,
        "strength": 0.5, "spacing": 0.25, "falloff": "parabolic"}},
        "samples": [{{"x": {}, "y": {}, "pressure": 1.0, "t": 0.0}}]}}}}]}}"#,
        at[0], at[1]
    );
    let json = d.join("big.json");
    std::fs::write(&json, journal).unwrap();
    let out = d.join("big.scarp");
    scarp_ok(&[
        "apply",
        "--journal",
        json.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
}

/// `scarp export ARGS` within 4 GB of address space (`ulimit -v`).
fn export_within_4gb(args: &[&str]) -> std::process::Output {
    std::process::Command::new("bash")
        .args(["-c", "ulimit -v 4000000 && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_scarp"))
        .arg("export")
        .args(args)
        .output()
        .unwrap()
}

/// A region of a large project exports by reading only the pages under it (issue 39: big
/// documents exported page by page): a 65536² project with one page painted, whose heights
/// whole would be 16 GiB, gives the Unreal export of its 1009² corner within 4 GB of address
/// space (the export read the whole document before: the allocation failed there), the same
/// heights and weights as the corner converted to a file first and exported.
#[test]
fn a_region_of_a_large_project_exports_without_reading_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = |n: &str| d.join(n).to_str().unwrap().to_string();
    dabbed_project(d, 65536, 300, [500, 500]);
    let limited = export_within_4gb(&[
        "--heights",
        &p("big.scarp"),
        "--engine",
        "unreal",
        "--out",
        &p("big"),
        "--region",
        "0,0,1009,1009",
        "--backend",
        "cpu",
    ]);
    assert!(limited.status.success(), "{}", stderr(&limited));
    scarp_ok(&[
        "convert",
        &p("big.scarp"),
        &p("corner.r32"),
        "--region",
        "0,0,1009,1009",
    ]);
    export(
        &d.join("corner.r32"),
        "unreal",
        &d.join("corner"),
        &["--backend", "cpu"],
    );
    for name in ["", "_rock", "_grass"] {
        let (a, b) = (
            png(&d.join(format!("big{name}.png"))),
            png(&d.join(format!("corner{name}.png"))),
        );
        assert!(a == b, "big{name}.png differs from the converted corner's");
    }
    let heights = png(&d.join("big.png"));
    assert_eq!(heights.width(), 1009);
    let hill = heights
        .as_luma16()
        .is_some_and(|h| h.pixels().any(|v| v.0[0] > 0));
    assert!(hill, "the painted hill is in the corner");
}

/// A whole large project exports as Unreal's World Partition tiles a band of rows at a time,
/// each band read from the pages under it (issue 39: big documents exported page by page): a
/// 32768² project (4 GiB of heights whole) with a hill painted gives its 2 x 2 tiles of 127
/// within 4 GB of address space (the export read the whole document first before: the
/// allocation failed there), their heights the plan's samples of the document within one 16-bit
/// level, their range the document's samples'.
#[test]
fn a_whole_large_project_exports_as_tiles_a_band_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = |n: &str| d.join(n).to_str().unwrap().to_string();
    dabbed_project(d, 32768, 2500, [20000, 9000]);
    let limited = export_within_4gb(&[
        "--heights",
        &p("big.scarp"),
        "--engine",
        "unreal",
        "--tiles",
        "2x2",
        "--resolution",
        "127",
        "--backend",
        "cpu",
        "--out",
        &p("wp"),
    ]);
    assert!(limited.status.success(), "{}", stderr(&limited));
    // The hill and a page around it, read back from the project; the rest is flat at 0.
    let hill = scarp::pages::geometry::Region {
        x: 17000,
        y: 6000,
        width: 6000,
        height: 6000,
    };
    scarp_ok(&[
        "convert",
        &p("big.scarp"),
        &p("hill.r32"),
        "--region",
        "17000,6000,6000,6000",
    ]);
    let grid = read(&d.join("hill.r32"), &ReadOptions::default()).unwrap();
    let document = |r: scarp::pages::geometry::Region| -> Result<Heights, ()> {
        let values = (r.y..r.y + r.height)
            .flat_map(|y| (r.x..r.x + r.width).map(move |x| (x, y)))
            .map(|(x, y)| {
                let inside = (hill.x..hill.x + hill.width).contains(&x)
                    && (hill.y..hill.y + hill.height).contains(&y);
                match inside {
                    true => grid.values[((y - hill.y) * hill.width + x - hill.x) as usize],
                    false => 0.0,
                }
            })
            .collect();
        Ok(Heights {
            width: r.width,
            height: r.height,
            values,
        })
    };
    let plan = Plan::tiled(
        Engine::Unreal,
        Fit::Resample,
        Some(127),
        [32768, 32768],
        1.0,
        (2, 2),
    )
    .unwrap();
    assert_eq!(plan.size, [253, 253]);
    // The plan's samples one at a time (each reads the 2 x 2 texels around it).
    let want: Vec<f32> = (0..253 * 253)
        .map(|i| {
            let at = scarp::pages::geometry::Region {
                x: i % 253,
                y: i / 253,
                width: 1,
                height: 1,
            };
            plan.samples(at, document).unwrap().values[0]
        })
        .collect();
    let (lo, hi) = scarp::terrain::formats::min_max(&want);
    assert!(lo == 0.0 && hi > 0.1, "the hill shows: {hi}");
    let level = (hi - lo) / 65535.0;
    for (_, _, r) in plan.tile_regions() {
        let name = format!("wp_x{}_y{}.png", r.x / 126, r.y / 126);
        let img = png(&d.join(&name)).into_luma16();
        assert_eq!(img.dimensions(), (127, 127), "{name}");
        for (k, v) in img.as_raw().iter().enumerate() {
            let (x, y) = (r.x + k as u32 % 127, r.y + k as u32 / 127);
            let h = lo + f32::from(*v) / 65535.0 * (hi - lo);
            let w = want[(y * 253 + x) as usize];
            assert!((h - w).abs() <= level, "{name} ({x}, {y}): {h} vs {w}");
        }
    }
}

/// The editor's engine export reads the open document a window at a time, its heights and
/// erosion's wear and deposits (`Document` as an export `Input`): the same files as `scarp
/// export` of the project the same journal saves, with the maps the Export dialog ticks.
#[test]
fn the_open_document_exports_as_its_project_does_with_its_maps() {
    use scarp::terrain::engines::{export as engine_export, Engine, Fit, MapKind, Request};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = |n: &str| d.join(n).to_str().unwrap().to_string();
    let (_, eroded) = common::hill_journals(d, r#"{"texel_size": 2.0, "height_unit": 300.0}"#);
    scarp_ok(&[
        "apply",
        "--journal",
        &p("eroded.json"),
        "--out",
        &p("job.scarp"),
    ]);
    let maps = "slope,drainage,wear,deposits";
    export(
        &d.join("job.scarp"),
        "unreal",
        &d.join("cli"),
        &["--maps", maps, "--backend", "cpu"],
    );
    let gpu = common::gpu();
    let tables = scarp::noise::NoiseTables::default();
    let mut doc = scarp::session::replay_journal(&gpu, &eroded, &tables).unwrap();
    doc.pump(None).unwrap();
    let desc = *doc.desc();
    let req = Request {
        engine: Engine::Unreal,
        fit: Fit::Resample,
        resolution: None,
        maps: vec![
            MapKind::Slope,
            MapKind::Drainage,
            MapKind::Wear,
            MapKind::Deposits,
        ],
        tiles: None,
    };
    let written = engine_export(
        &mut doc,
        &desc,
        req,
        &scarp::render::look::Materials::default(),
        &d.join("ed"),
        &mut scarp::maps::kernels::Cpu,
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(written.files.len(), 1 + 5 + 4, "{:?}", written.files);
    for suffix in ["", "_rock", "_grass", "_snow"] {
        let (a, b) = (
            png(&d.join(format!("ed{suffix}.png"))),
            png(&d.join(format!("cli{suffix}.png"))),
        );
        assert!(a == b, "ed{suffix}.png differs from the project's export");
    }
    let opts = ReadOptions::default();
    for map in ["slope", "drainage", "wear", "deposits"] {
        let a = read(&d.join(format!("ed_{map}.exr")), &opts)
            .unwrap()
            .values;
        let b = read(&d.join(format!("cli_{map}.exr")), &opts)
            .unwrap()
            .values;
        assert!(a == b, "ed_{map}.exr differs from the project's export");
        if map == "wear" {
            assert!(a.iter().any(|&m| m > 0.0), "the run wore the hill");
        }
    }
    assert_no_validation_messages(&gpu);
}

/// What an export makes whole is refused past 2^28 samples before anything is read or written,
/// naming why: Godot's one file of a 16400² project (Unreal's, made a band at a time, is not).
#[test]
fn a_whole_made_file_past_its_limit_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    dabbed_project(d, 16400, 10, [100, 100]);
    let big = d.join("big.scarp");
    let out = scarp(&[
        "export",
        "--heights",
        big.to_str().unwrap(),
        "--engine",
        "godot",
        "--out",
        d.join("g").to_str().unwrap(),
    ]);
    let e = stderr(&out);
    assert!(
        !out.status.success() && e.contains("godot: its one 16400x16400 file is made in memory"),
        "{e}"
    );
    assert_eq!(e.trim().lines().count(), 1, "one line: {e}");
    let left: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('g'))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
