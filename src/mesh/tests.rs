use super::*;
use crate::pages::Units;
use ahash::AHashMap;
use glam::Vec3;

/// A document of `w` x `h` texels of `texel` metres, `unit` metres per height unit.
fn desc(w: u32, h: u32, texel: f64, unit: f64) -> DocumentDesc {
    DocumentDesc {
        units: Units {
            texel_size: Some(texel),
            height_unit: Some(unit),
            ..Units::default()
        },
        ..DocumentDesc::for_heights(w, h)
    }
}

/// Rolling hills with a ridge: every level of the quadtree has error somewhere.
fn hills(w: u32, h: u32) -> Vec<f32> {
    (0..w * h)
        .map(|i| {
            let (x, y) = ((i % w) as f32, (i / w) as f32);
            0.3 * (x * 0.05).sin() * (y * 0.031).cos()
                + 0.1 * (x * 0.21 + y * 0.13).sin()
                + 0.02 * ((x * 1.7).sin() * (y * 2.3).cos())
        })
        .collect()
}

fn mesh_of(v: &[f32], w: u32, h: u32, region: Region, d: &DocumentDesc, bound: f64) -> Mesh {
    build(
        Grid {
            values: v,
            width: w,
            height: h,
            origin: [0, 0],
        },
        region,
        d,
        bound,
    )
    .unwrap()
}

/// The mesh's heights (metres) at document texels from its triangles' positions alone (a
/// search through buckets of 8² texels, independent of the builder's bookkeeping).
struct Heights<'a> {
    m: &'a Mesh,
    texel: f64,
    buckets: AHashMap<(i64, i64), Vec<usize>>,
}

impl<'a> Heights<'a> {
    fn new(m: &'a Mesh, texel: f64) -> Self {
        let mut buckets: AHashMap<(i64, i64), Vec<usize>> = AHashMap::new();
        for (i, t) in m.indices.chunks_exact(3).enumerate() {
            let cell = |k: usize, axis: usize| {
                (f64::from(m.positions[t[k] as usize][axis]) / texel / 8.0).floor() as i64
            };
            let (x0, x1) = (
                (0..3).map(|k| cell(k, 0)).min(),
                (0..3).map(|k| cell(k, 0)).max(),
            );
            let (y0, y1) = (
                (0..3).map(|k| cell(k, 2)).min(),
                (0..3).map(|k| cell(k, 2)).max(),
            );
            for y in y0.unwrap()..=y1.unwrap() {
                for x in x0.unwrap()..=x1.unwrap() {
                    buckets.entry((x, y)).or_default().push(i);
                }
            }
        }
        Self { m, texel, buckets }
    }

    /// None where no triangle covers texel (x, y).
    fn at(&self, x: u32, y: u32) -> Option<f64> {
        let p = [f64::from(x) * self.texel, f64::from(y) * self.texel];
        let cell = (i64::from(x) / 8, i64::from(y) / 8);
        self.buckets.get(&cell)?.iter().find_map(|&i| {
            let t = &self.m.indices[3 * i..3 * i + 3];
            let v = [0, 1, 2].map(|k| self.m.positions[t[k] as usize].map(f64::from));
            let e = |a: [f64; 3], b: [f64; 3], p: [f64; 2]| {
                (b[0] - a[0]) * (p[1] - a[2]) - (b[2] - a[2]) * (p[0] - a[0])
            };
            let area = e(v[0], v[1], [v[2][0], v[2][2]]);
            let w = [e(v[1], v[2], p), e(v[2], v[0], p), e(v[0], v[1], p)].map(|w| w / area);
            w.iter()
                .all(|&w| w >= -1e-9)
                .then(|| w[0] * v[0][1] + w[1] * v[1][1] + w[2] * v[2][1])
        })
    }
}

#[test]
fn the_mesh_stays_within_its_bound_at_every_texel_and_covers_the_region() {
    let (w, h) = (150, 97);
    let v = hills(w, h);
    let d = desc(w, h, 2.0, 100.0);
    for bound in [0.0, 0.5, 3.0] {
        let m = mesh_of(&v, w, h, Region::whole(w, h), &d, bound);
        assert!(m.max_error_m <= bound, "{bound}: {}", m.max_error_m);
        let surface = Heights::new(&m, 2.0);
        for y in 0..h {
            for x in 0..w {
                let z = surface
                    .at(x, y)
                    .unwrap_or_else(|| panic!("{bound}: texel ({x}, {y}) not covered"));
                let truth = f64::from(v[(y * w + x) as usize]) * 100.0;
                // The positions are f32 metres.
                assert!(
                    (z - truth).abs() <= bound + 1e-4,
                    "{bound} at ({x}, {y}): {z} vs {truth}"
                );
            }
        }
        if bound == 0.0 {
            assert_eq!(m.positions.len(), (w * h) as usize, "every texel a vertex");
            assert_eq!(m.max_error_m, 0.0);
        }
    }
}

#[test]
fn a_looser_bound_takes_fewer_triangles_and_a_plane_takes_few() {
    let (w, h) = (257, 257);
    let v = hills(w, h);
    let d = desc(w, h, 1.0, 10.0);
    let counts: Vec<usize> = [0.0, 0.5, 2.0, 8.0]
        .iter()
        .map(|&b| mesh_of(&v, w, h, Region::whole(w, h), &d, b).triangles())
        .collect();
    assert_eq!(counts[0], 2 * 256 * 256);
    assert!(counts.windows(2).all(|c| c[1] < c[0]), "{counts:?}");
    // A tilted plane is exact at any level: the two triangles of the square.
    let plane: Vec<f32> = (0..w * h)
        .map(|i| 0.001 * (i % w) as f32 + 0.002 * (i / w) as f32)
        .collect();
    let m = mesh_of(&plane, w, h, Region::whole(w, h), &d, 0.01);
    assert_eq!(m.triangles(), 2);
    assert!(m.max_error_m <= 0.01);
}

/// Every face of `m` (a `w` x `h` region of `texel` metres from the document's corner) points
/// up, and every edge inside the region joins exactly two triangles: no crack, no T-junction
/// (where one triangle's side meets two of its neighbour's, three edges are used once).
fn assert_closed(m: &Mesh, w: u32, h: u32, texel: f32) {
    let mut edges: AHashMap<(u32, u32), i32> = AHashMap::new();
    for t in m.indices.chunks_exact(3) {
        let p = [0, 1, 2].map(|k| Vec3::from(m.positions[t[k] as usize]));
        assert!((p[1] - p[0]).cross(p[2] - p[0]).y > 0.0, "{t:?} faces down");
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            *edges.entry((a.min(b), a.max(b))).or_default() += 1;
        }
    }
    let on_border = |i: u32| {
        let [x, _, z] = m.positions[i as usize];
        x == 0.0 || z == 0.0 || x == (w - 1) as f32 * texel || z == (h - 1) as f32 * texel
    };
    for (&(a, b), &n) in &edges {
        assert!(n == 1 || n == 2, "edge ({a}, {b}) in {n} triangles");
        if n == 1 {
            let (pa, pb) = (m.positions[a as usize], m.positions[b as usize]);
            assert!(on_border(a) && on_border(b), "a crack at {pa:?}-{pb:?}");
        }
    }
}

/// Rough ground splits unevenly: a triangle's neighbour across a child's long side may split
/// while the triangle's own subtree would not.
#[test]
fn rough_ground_leaves_no_crack() {
    // A flat 5x5 grid with one spike and a small bump beside it: the bump's side must split
    // with the spike's.
    let mut v = vec![0.0f32; 25];
    v[5 + 3] = 0.5;
    v[5 + 4] = 10.0;
    let d = desc(5, 5, 1.0, 1.0);
    let m = mesh_of(&v, 5, 5, Region::whole(5, 5), &d, 1.0);
    assert_closed(&m, 5, 5, 1.0);
    // Noise at every texel, several sizes and bounds.
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32
    };
    for (w, h) in [(33, 33), (40, 27), (65, 65)] {
        let v: Vec<f32> = (0..w * h).map(|_| next() * next() * next()).collect();
        let d = desc(w, h, 1.0, 10.0);
        for bound in [0.3, 1.0, 3.0] {
            let m = mesh_of(&v, w, h, Region::whole(w, h), &d, bound);
            assert_closed(&m, w, h, 1.0);
            assert!(m.max_error_m <= bound);
        }
    }
}

#[test]
fn faces_point_up_edges_pair_up_and_normals_are_the_heightfields() {
    let (w, h) = (200, 131);
    let v = hills(w, h);
    let d = desc(w, h, 4.0, 300.0);
    let m = mesh_of(&v, w, h, Region::whole(w, h), &d, 1.0);
    assert_closed(&m, w, h, 4.0);
    // Normals: unit, and across a texel's neighbours as the heights slope.
    for (p, n) in m.positions.iter().zip(&m.normals) {
        assert!((Vec3::from(*n).length() - 1.0).abs() < 1e-5);
        let (x, y) = ((p[0] / 4.0) as u32, (p[2] / 4.0) as u32);
        if x > 0 && y > 0 && x + 1 < w && y + 1 < h {
            let at = |x: u32, y: u32| v[(y * w + x) as usize] * 300.0;
            let slope_x = (at(x + 1, y) - at(x - 1, y)) / 8.0;
            assert!((-n[0] / n[1] - slope_x).abs() < 1e-3 * (1.0 + slope_x.abs()));
        }
    }
}

#[test]
fn neighbouring_regions_meet_and_map_their_texture_over_themselves() {
    let (w, h) = (180, 120);
    let v = hills(w, h);
    let d = desc(w, h, 1.5, 80.0);
    let left = mesh_of(
        &v,
        w,
        h,
        Region {
            x: 0,
            y: 0,
            width: 91,
            height: 120,
        },
        &d,
        0.0,
    );
    let right = mesh_of(
        &v,
        w,
        h,
        Region {
            x: 90,
            y: 0,
            width: 90,
            height: 120,
        },
        &d,
        0.0,
    );
    let column = |m: &Mesh| {
        let mut c: Vec<([f32; 3], [f32; 3])> = m
            .positions
            .iter()
            .zip(&m.normals)
            .filter(|(p, _)| p[0] == 90.0 * 1.5)
            .map(|(p, n)| (*p, *n))
            .collect();
        c.sort_by(|a, b| a.0[2].total_cmp(&b.0[2]));
        c
    };
    assert_eq!(column(&left).len(), 120);
    assert_eq!(
        column(&left),
        column(&right),
        "the shared column's vertices and normals"
    );
    for m in [&left, &right] {
        let (lo, hi) = m.uvs.iter().fold(([1f32; 2], [0f32; 2]), |(lo, hi), t| {
            (
                [lo[0].min(t[0]), lo[1].min(t[1])],
                [hi[0].max(t[0]), hi[1].max(t[1])],
            )
        });
        assert_eq!((lo, hi), ([0.0; 2], [1.0; 2]));
    }
}

#[test]
fn a_rectangle_of_the_document_gives_the_documents_mesh() {
    // The editor reads the region and one texel around it from the pages.
    let (w, h) = (160, 140);
    let v = hills(w, h);
    let d = desc(w, h, 3.0, 60.0);
    let region = Region {
        x: 30,
        y: 20,
        width: 100,
        height: 90,
    };
    let whole = mesh_of(&v, w, h, region, &d, 0.5);
    let around = Region {
        x: 29,
        y: 19,
        width: 102,
        height: 92,
    };
    let part = around.cut(&v, w);
    let inner = Region {
        x: 1,
        y: 1,
        ..region
    };
    let m = build(
        Grid {
            values: &part,
            width: 102,
            height: 92,
            origin: [29, 19],
        },
        inner,
        &d,
        0.5,
    )
    .unwrap();
    assert_eq!(m.positions, whole.positions);
    assert_eq!(m.normals, whole.normals);
    assert_eq!(m.uvs, whole.uvs);
    assert_eq!(m.indices, whole.indices);
}

#[test]
fn heights_leave_in_metres_from_the_height_origin() {
    let (w, h) = (65, 65);
    let v = vec![0.5f32; (w * h) as usize];
    let mut d = desc(w, h, 10.0, 200.0);
    d.units.height_origin = Some(-50.0);
    let m = mesh_of(&v, w, h, Region::whole(w, h), &d, 0.0);
    assert!(m.positions.iter().all(|p| p[1] == 50.0), "0.5 · 200 − 50");
    assert!(m.normals.iter().all(|n| *n == [0.0, 1.0, 0.0]));
}

#[test]
fn bad_requests_are_refused_by_name() {
    let v = vec![0.0f32; 64 * 64];
    let d = desc(64, 64, 1.0, 1.0);
    let g = || Grid {
        values: &v,
        width: 64,
        height: 64,
        origin: [0, 0],
    };
    assert_eq!(
        build(g(), Region::whole(64, 64), &d, -1.0).unwrap_err(),
        MeshError::Bound(-1.0)
    );
    assert!(build(g(), Region::whole(64, 64), &d, f64::NAN).is_err());
    let outside = Region {
        x: 40,
        y: 0,
        width: 30,
        height: 10,
    };
    assert!(matches!(
        build(g(), outside, &d, 1.0),
        Err(MeshError::Region(_))
    ));
    let thin = Region {
        x: 0,
        y: 0,
        width: 1,
        height: 10,
    };
    assert_eq!(
        build(g(), thin, &d, 1.0).unwrap_err(),
        MeshError::TooSmall(1, 10)
    );
}

#[test]
fn glb_has_its_header_chunks_and_lengths() {
    let (w, h) = (70, 70);
    let v = hills(w, h);
    let m = mesh_of(&v, w, h, Region::whole(w, h), &desc(w, h, 1.0, 10.0), 0.05);
    let file = gltf::glb(&m, "hills").unwrap();
    let word = |i: usize| u32::from_le_bytes(file[i..i + 4].try_into().unwrap());
    assert_eq!(&file[0..4], b"glTF");
    assert_eq!(word(4), 2);
    assert_eq!(word(8) as usize, file.len());
    let json_len = word(12) as usize;
    assert_eq!(&file[16..20], b"JSON");
    assert_eq!(json_len % 4, 0);
    let doc: serde_json::Value = serde_json::from_slice(&file[20..20 + json_len]).unwrap();
    let bin = 20 + json_len;
    assert_eq!(&file[bin + 4..bin + 8], b"BIN\0");
    assert_eq!(word(bin) as usize, file.len() - bin - 8);
    assert_eq!(doc["buffers"][0]["byteLength"], word(bin));
    assert_eq!(doc["accessors"][0]["count"], m.positions.len());
    assert_eq!(doc["accessors"][3]["count"], m.indices.len());
}
