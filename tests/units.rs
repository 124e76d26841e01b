//! Real-world scale (issue 37): a document's units (metres per texel, metres per height unit)
//! from a journal or a georeferenced file survive journal -> project -> reopen -> convert, GDAL's
//! GeoTIFFs (UTM in metres, EPSG:4326 in degrees) and SRTM names give the right texel size, and
//! `scarp info` reports the extent and heights in metres. CPU only except `apply` (lavapipe).

mod common;

use scarp::terrain::formats::{read_reporting, ReadOptions};
use std::path::Path;

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/geotiff")
        .join(name)
}

/// Metres per degree of latitude and longitude at `lat` by the usual WGS84 series (an
/// independent reference for the ellipsoid formulas).
fn series(lat: f64) -> (f64, f64) {
    let p = lat.to_radians();
    (
        111_132.954 - 559.822 * (2.0 * p).cos() + 1.175 * (4.0 * p).cos(),
        111_412.84 * p.cos() - 93.5 * (3.0 * p).cos() + 0.118 * (5.0 * p).cos(),
    )
}

fn texel_size_of(path: &Path) -> Option<f64> {
    let (_, report) = read_reporting(path, &ReadOptions::default(), &mut |_, _| {})
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    report.georef.and_then(|g| g.units.texel_size)
}

#[test]
fn gdal_geotiffs_in_metres_and_degrees_give_their_texel_size() {
    // UTM zone 17N, 30 m pixels (tests/fixtures/geotiff/README.md).
    let utm = texel_size_of(&fixture("utm17n-30m-int16.tif")).expect("georeferenced");
    assert!((utm - 30.0).abs() < 0.5 * 0.01 * 30.0, "{utm}");
    // EPSG:4326, 3 arc-second pixels from 36.00 to 36.02 N: the mean of the east-west and
    // north-south sizes at the centre latitude.
    let geo = texel_size_of(&fixture("wgs84-3arcsec-float32.tif")).expect("georeferenced");
    let (m_lat, m_lon) = series(36.01);
    let want = 0.5 * (m_lat + m_lon) * 3.0 / 3600.0;
    assert!((geo - want).abs() < 0.005 * want, "{geo} vs {want}");
    // The older fixtures hold a pixel scale but no GeoKeys: not georeferenced.
    assert_eq!(texel_size_of(&fixture("int16-lzw-tiled-nodata.tif")), None);
}

#[test]
fn srtm_tiles_take_their_latitude_from_their_name() {
    let dir = tempfile::tempdir().unwrap();
    let hgt = dir.path().join("N36W084.hgt");
    let bytes: Vec<u8> = (0..1201 * 1201)
        .flat_map(|i: i32| ((i % 1000) as i16).to_be_bytes())
        .collect();
    std::fs::write(&hgt, bytes).unwrap();
    let t = texel_size_of(&hgt).expect("a named SRTM tile");
    let (m_lat, m_lon) = series(36.5);
    let want = 0.5 * (m_lat + m_lon) * 3.0 / 3600.0;
    assert!((t - want).abs() < 0.005 * want, "{t} vs {want}");
    let info = common::scarp_ok(&["info", hgt.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&info.stdout);
    assert!(text.contains("heights: 0 to 999 m"), "{text}");
    assert!(text.contains("height unit: 1 m\n"), "{text}");
}

/// The lines of `scarp info FILE`.
fn info(path: &Path) -> String {
    String::from_utf8_lossy(&common::scarp_ok(&["info", path.to_str().unwrap()]).stdout).into()
}

#[test]
fn units_survive_journal_project_reopen_and_convert() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("j.json");
    std::fs::write(
        &journal,
        r#"{"version": 2, "document": {"width": 300, "height": 200, "page_size": 128,
            "units": {"texel_size": 2.5, "height_unit": 100.0, "height_origin": -50.0}},
            "steps": [{"stroke": {"brush": {"type": "raise", "radius": 60, "strength": 0.5},
                      "samples": [{"x": 100, "y": 100, "pressure": 1.0, "t": 0.0}]}}]}"#,
    )
    .unwrap();
    let project = dir.path().join("p.scarp");
    common::scarp_ok(&[
        "apply",
        "--journal",
        journal.to_str().unwrap(),
        "--out",
        project.to_str().unwrap(),
    ]);
    // A height file from the same journal keeps them in its sidecar.
    let file = dir.path().join("h.r32");
    common::scarp_ok(&[
        "apply",
        "--journal",
        journal.to_str().unwrap(),
        "--out",
        file.to_str().unwrap(),
    ]);
    let text = info(&file);
    assert!(text.contains("texel size: 2.5 m\n"), "{text}");
    assert!(text.contains("height origin: -50 m"), "{text}");
    let opened = scarp::project::open(&project).unwrap().meta().document;
    assert_eq!(opened.units.texel_size, Some(2.5));
    assert_eq!(opened.units.height_unit, Some(100.0));
    assert_eq!(opened.units.height_origin, Some(-50.0));
    let text = info(&project);
    assert!(text.contains("texel size: 2.5 m\n"), "{text}");
    assert!(text.contains("extent: 0.75 x 0.5 km"), "{text}");
    assert!(text.contains("height origin: -50 m"), "{text}");
    assert!(text.contains("true vertical scale: 40 texels"), "{text}");
    // A project converted from it (pages read back) keeps them.
    let again = dir.path().join("again.scarp");
    common::scarp_ok(&[
        "convert",
        project.to_str().unwrap(),
        again.to_str().unwrap(),
    ]);
    let reopened = scarp::project::open(&again).unwrap().meta().document;
    assert_eq!(reopened.units, opened.units);
    // A project made from a georeferenced DEM holds its units; flags go over the file's.
    let dem = dir.path().join("dem.scarp");
    let out = common::scarp_ok(&[
        "convert",
        fixture("utm17n-30m-int16.tif").to_str().unwrap(),
        dem.to_str().unwrap(),
    ]);
    assert!(
        common::stderr(&out).contains("projected, in metres"),
        "{}",
        common::stderr(&out)
    );
    let units = scarp::project::open(&dem).unwrap().meta().document.units;
    assert_eq!(units.height_unit, Some(1.0), "Int16 samples are metres");
    assert!((units.texel_size.unwrap() - 30.0).abs() < 1e-6);
    // Its heights from the stored coarse level (no page read), as the file has them.
    let text = info(&dem);
    assert!(text.contains("heights: 51 to 350 m"), "{text}");
    common::scarp_ok(&[
        "convert",
        fixture("utm17n-30m-int16.tif").to_str().unwrap(),
        dem.to_str().unwrap(),
        "--texel-size",
        "10",
    ]);
    let units = scarp::project::open(&dem).unwrap().meta().document.units;
    assert_eq!(units.texel_size, Some(10.0));
}

#[test]
fn files_without_georeference_say_so_and_bad_units_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let r32 = dir.path().join("a.r32");
    let values: Vec<u8> = (0..64 * 64)
        .flat_map(|i| (i as f32 / 4096.0).to_le_bytes())
        .collect();
    std::fs::write(&r32, values).unwrap();
    let out = common::scarp_ok(&["info", r32.to_str().unwrap()]);
    assert!(
        common::stderr(&out).contains("no georeference"),
        "{}",
        common::stderr(&out)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("texel size: 1 m (not known: the default)"),
        "{text}"
    );
    assert!(text.contains("true vertical scale: 16 texels"), "{text}");
    for (flag, value, named) in [
        ("--texel-size", "0", "--texel-size"),
        ("--height-unit", "-1", "--height-unit"),
        ("--texel-size", "inf", "--texel-size"),
    ] {
        let out = common::scarp(&["info", r32.to_str().unwrap(), flag, value]);
        assert!(!out.status.success());
        let err = common::stderr(&out);
        assert!(err.contains(named) && err.lines().count() == 1, "{err}");
    }
    // A sidecar holding a bad unit is named, not taken for a flag.
    common::scarp_ok(&[
        "convert",
        r32.to_str().unwrap(),
        dir.path().join("b.png").to_str().unwrap(),
    ]);
    let side = dir.path().join("b.png.json");
    let text = std::fs::read_to_string(&side).unwrap();
    std::fs::write(
        &side,
        text.replace("\"texel_size_known\": false", "\"texel_size_known\": true")
            .replace("\"texel_size_m\": 1.0", "\"texel_size_m\": -2.0"),
    )
    .unwrap();
    let out = common::scarp(&["info", dir.path().join("b.png").to_str().unwrap()]);
    assert!(!out.status.success());
    let err = common::stderr(&out);
    assert!(
        err.contains("b.png.json") && err.contains("texel_size") && !err.contains("--texel-size"),
        "{err}"
    );
    // Tile sets check the flags too.
    let out = common::scarp(&[
        "convert",
        dir.path().join("t_x{i}_y{j}.png").to_str().unwrap(),
        dir.path().join("t.r32").to_str().unwrap(),
        "--tiles",
        "2x2",
        "--texel-size",
        "0",
    ]);
    assert!(!out.status.success());
    assert!(
        common::stderr(&out).contains("--texel-size"),
        "{}",
        common::stderr(&out)
    );
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"{"version": 2, "document": {"width": 64, "height": 64, "units": {"texel_size": -3}}}"#,
    )
    .unwrap();
    let out = common::scarp(&[
        "apply",
        "--journal",
        bad.to_str().unwrap(),
        "--out",
        dir.path().join("x.r32").to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let err = common::stderr(&out);
    assert!(
        err.contains("document.units") && err.contains("texel_size"),
        "{err}"
    );
}

#[test]
fn true_scale_frames_a_real_relief() {
    // A 403x344 DEM of 90 m texels with heights 236..1076 m (the USGS case of issue 37): at true
    // scale it is 9 texels tall over 403 wide; without units a quarter of the side per unit made
    // it 85,000 texels tall.
    let units = scarp::pages::Units::metres(90.0);
    let desc = scarp::pages::DocumentDesc {
        units,
        ..scarp::pages::DocumentDesc::for_heights(403, 344)
    };
    let vs = desc.vertical_scale();
    assert!((vs - 1.0 / 90.0).abs() < 1e-9, "{vs}");
    let relief = (1076.0 - 236.0) * vs;
    assert!(relief > 5.0 && relief < 20.0, "{relief}");
    let unitless = scarp::pages::DocumentDesc::for_heights(403, 344);
    assert_eq!(
        unitless.vertical_scale(),
        0.25 * 403.0,
        "old documents keep their look"
    );
    // Framed as `scarp render` frames it, the ground (its corners at the mean height) spans
    // much of a 960x540 image at true scale; at the old scale it shrank to a speck under a box
    // 85,000 texels tall.
    let covered = |vs: f32| {
        let (lo, hi) = (236.0 * vs, 1076.0 * vs);
        let mut cam = scarp::render::Camera::default();
        cam.frame_all(403, 344, lo, hi);
        let m = cam.view_proj([960, 540]);
        let (mut x0, mut x1, mut y0, mut y1) = (1f32, -1f32, 1f32, -1f32);
        for (x, z) in [(0.0, 0.0), (402.0, 0.0), (0.0, 343.0), (402.0, 343.0)] {
            let p = m * glam::Vec4::new(x, 0.5 * (lo + hi), z, 1.0);
            let (nx, ny) = (p.x / p.w, p.y / p.w);
            (x0, x1, y0, y1) = (x0.min(nx), x1.max(nx), y0.min(ny), y1.max(ny));
        }
        ((x1.min(1.0) - x0.max(-1.0)) / 2.0) * ((y1.min(1.0) - y0.max(-1.0)) / 2.0)
    };
    let true_scale = covered(vs);
    assert!(true_scale > 0.25, "{true_scale}");
    let old = covered(unitless.vertical_scale());
    assert!(old < 0.01, "{old}");
}

#[test]
fn exports_carry_their_georeference_and_a_sidecar_in_metres() {
    let dir = tempfile::tempdir().unwrap();
    let utm = fixture("utm17n-30m-int16.tif");
    // A crop keeps the CRS and pixel size; its origin moves with it (GDAL reads the same:
    // `gdalinfo` gives EPSG:32617, origin (500300, 4000600), pixel 30 x -30).
    let crop = dir.path().join("crop.tif");
    common::scarp_ok(&[
        "convert",
        utm.to_str().unwrap(),
        crop.to_str().unwrap(),
        "--region",
        "10,4,20,12",
    ]);
    let (_, report) = read_reporting(&crop, &ReadOptions::default(), &mut |_, _| {}).unwrap();
    let geo = report.georef.unwrap().units.geo.expect("placed");
    assert_eq!(geo.epsg, 32617);
    assert!(!geo.geographic);
    assert_eq!(geo.pixel, [30.0, 30.0]);
    assert_eq!(
        geo.origin,
        [500_000.0 + 10.0 * 30.0, 4_000_720.0 - 4.0 * 30.0]
    );
    let (_, original) = read_reporting(&utm, &ReadOptions::default(), &mut |_, _| {}).unwrap();
    assert_eq!(
        original.georef.unwrap().units.geo.unwrap().origin,
        [500_000.0, 4_000_720.0],
        "the fixture's own corner"
    );
    // A 16-bit PNG in 2x1 tiles: each tile's sidecar says its size, metres and mapping.
    let png = dir.path().join("land.png");
    common::scarp_ok(&[
        "convert",
        utm.to_str().unwrap(),
        png.to_str().unwrap(),
        "--tiles",
        "3x1",
        "--range",
        "0,400",
    ]);
    let tile = dir.path().join("land_x1_y0.png");
    let text = std::fs::read_to_string(dir.path().join("land_x1_y0.png.json")).unwrap();
    let side: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(side["file"], "land_x1_y0.png");
    assert_eq!(side["texel_size_m"], 30.0);
    assert_eq!(side["width"], 14, "40 texels in 3 edge-sharing tiles of 14");
    assert_eq!(side["extent_m"][0], 14.0 * 30.0);
    assert_eq!(side["integer"]["bits"], 16);
    assert_eq!(side["integer"]["range_m"], serde_json::json!([0.0, 400.0]));
    assert_eq!(side["unreal"]["scale_xy_cm"], 3000.0);
    assert_eq!(side["unreal"]["scale_z"], 400.0 * 100.0 / 512.0);
    assert_eq!(side["unity"]["size_m"][1], 400.0);
    assert_eq!(side["geo"]["origin"][0], 500_000.0 + 13.0 * 30.0);
    assert!(tile.exists());
    // What the sidecar says of the heights is what the tile holds.
    let back = scarp::terrain::formats::read(
        &tile,
        &ReadOptions {
            range: (0.0, 400.0),
            ..Default::default()
        },
    )
    .unwrap();
    let (lo, hi) = scarp::terrain::formats::min_max(&back.values);
    let want = |v: &serde_json::Value| v.as_f64().unwrap() as f32;
    assert!((lo - want(&side["heights_m"][0])).abs() < 0.01, "{lo}");
    assert!((hi - want(&side["heights_m"][1])).abs() < 0.01, "{hi}");
}

#[test]
fn an_exported_png_and_its_tiles_come_back_in_metres_with_their_units() {
    let dir = tempfile::tempdir().unwrap();
    let utm = fixture("utm17n-30m-int16.tif");
    let whole = scarp::terrain::formats::read(&utm, &ReadOptions::default()).unwrap();
    let d = |name: &str| dir.path().join(name);
    let s = |p: &std::path::PathBuf| p.to_str().unwrap().to_string();
    common::scarp_ok(&["convert", &s(&utm), &s(&d("land.png"))]);
    common::scarp_ok(&["convert", &s(&utm), &s(&d("tiles.png")), "--tiles", "3x1"]);
    // Read back with no flags: the sidecar's range and units (a 16-bit PNG holds levels).
    for (input, extra) in [
        ("land.png", vec![]),
        ("tiles_x{i}_y{j}.png", vec!["--tiles", "3x1"]),
    ] {
        let project = d("back.scarp");
        let mut args = vec!["convert".to_string(), s(&d(input)), s(&project)];
        args.extend(extra.iter().map(|a| a.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = common::scarp_ok(&args);
        assert!(
            common::stderr(&out).contains("units and range from"),
            "{input}"
        );
        let doc = scarp::project::open(&project).unwrap().meta().document;
        assert_eq!(doc.units.texel_size, Some(30.0), "{input}");
        assert_eq!(doc.units.height_unit, Some(1.0), "{input}");
        assert_eq!(
            doc.units.geo.unwrap().origin,
            [500_000.0, 4_000_720.0],
            "{input}"
        );
        let r32 = d("back.r32");
        common::scarp_ok(&["convert", &s(&project), &s(&r32)]);
        let size = ReadOptions {
            size: Some((40, 24)),
            ..Default::default()
        };
        let back = scarp::terrain::formats::read(&r32, &size).unwrap();
        let step = (350.0 - 51.0) / 65535.0;
        let worst = common::max_diff(&back.values, &whole.values);
        assert!(
            worst <= step,
            "{input}: {worst} m off (a level is {step} m)"
        );
    }
    // The editor opens the export as the commands do: in metres, with its units.
    let gpu = common::gpu();
    let tables = scarp::noise::NoiseTables::default();
    let (mut session, _, _) =
        scarp::session::Session::open(&gpu, &d("land.png"), &tables, false).unwrap();
    let desc = *session.doc.desc();
    assert_eq!((desc.width, desc.height), (40, 24));
    assert_eq!(desc.units.texel_size, Some(30.0));
    assert_eq!(desc.units.height_unit, Some(1.0));
    assert_eq!(desc.units.geo.unwrap().origin, [500_000.0, 4_000_720.0]);
    let shown = session.doc.to_dense().unwrap();
    let worst = common::max_diff(&shown, &whole.values);
    assert!(
        worst <= (350.0 - 51.0) / 65535.0,
        "the editor: {worst} m off"
    );
    common::assert_no_validation_messages(&gpu);
}

/// The slope overlay reads the ground's angle in true degrees on a document that knows its
/// units, whatever the exaggeration; on one that does not, the angle as drawn (as always).
#[test]
fn the_slope_overlay_reads_true_degrees_under_exaggeration() {
    use scarp::render::analysis::slope_colour;
    use scarp::render::camera::{screen_point, Camera};
    use scarp::render::offscreen::{offscreen_options, Offscreen};
    use scarp::render::{TerrainRenderer, ViewSettings};
    let gpu = common::gpu();
    // A 30-degree ramp along x on texels of 1 m, heights in metres: true scale 1.
    let k = 30f32.to_radians().tan();
    let plain = common::doc(256, 256, 128);
    let metric = scarp::pages::DocumentDesc {
        units: scarp::pages::Units::metres(1.0),
        ..plain
    };
    assert_eq!(metric.vertical_scale(), 1.0);
    let heights: Vec<f32> = (0..256 * 256).map(|i| k * (i % 256) as f32).collect();
    let size = [320, 240];
    let walkable = 35.0;
    let encode = |c: [f32; 3]| c.map(|v| (v.powf(1.0 / 2.2) * 255.0).round() as i32);
    let colour_at_centre = |d: scarp::pages::DocumentDesc, vs: f32| {
        let tables = scarp::noise::NoiseTables::new(2009);
        let mut terrain =
            scarp::document::Document::from_heights(&gpu, d, &heights, &tables).unwrap();
        let mut r = TerrainRenderer::new(&gpu, d, offscreen_options()).unwrap();
        let mut off = Offscreen::new(&gpu, size).unwrap();
        let centre = glam::Vec3::new(128.0, k * 128.0 * vs, 128.0);
        let cam = Camera::look_at(centre + glam::Vec3::new(0.0, 300.0, 300.0), centre);
        let view = ViewSettings {
            vertical_scale: vs,
            slope: Some(walkable),
            ..ViewSettings::default()
        };
        let img = off
            .render(&mut r, &mut terrain.store, &cam, &view, true, None)
            .unwrap()
            .pixels
            .unwrap();
        let s = screen_point(&cam.view_proj(size), size, centre).unwrap();
        let i = 4 * (s.y as usize * size[0] as usize + s.x as usize);
        [img[i] as i32, img[i + 1] as i32, img[i + 2] as i32]
    };
    let near = |got: [i32; 3], deg: f32| {
        let want = encode(slope_colour(deg, walkable));
        (0..3).all(|c| (got[c] - want[c]).abs() <= 3)
    };
    for vs in [1.0, 2.0, 0.5] {
        let got = colour_at_centre(metric, vs);
        assert!(near(got, 30.0), "metric, vertical scale {vs}: {got:?}");
    }
    // Without units, exaggerated twice the ramp reads as drawn: atan(2 tan 30°) = 49.1°.
    let drawn = 2.0 * k;
    let got = colour_at_centre(plain, 2.0);
    assert!(near(got, drawn.atan().to_degrees()), "{got:?}");
    common::assert_no_validation_messages(&gpu);
}

/// The DEM of issue 37 (USGS, the Jacksboro fault in Tennessee: 403x344 texels of 3 arc-seconds,
/// 236 to 1076 m; tests/fixtures/geotiff/README.md) rendered with no flags: terrain covers much
/// of the image. At the old default scale (a quarter of the side per metre) the same render was
/// an empty sky.
#[test]
fn a_real_dem_renders_as_terrain_with_no_flags() {
    let dir = tempfile::tempdir().unwrap();
    let dem = fixture("jacksboro-3arcsec.tif");
    let covered = |extra: &[&str]| {
        let out = dir.path().join("dem.png");
        let mut args = vec![
            "render",
            "--heights",
            dem.to_str().unwrap(),
            "--image",
            "240x135",
            "--plain",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        common::scarp_ok(&args);
        let img = image::open(&out).unwrap().to_rgb8();
        // The plain look's sky is one colour: the top-left corner's.
        let sky = *img.get_pixel(0, 0);
        let terrain = img
            .pixels()
            .filter(|p| (0..3).any(|c| (p[c] as i32 - sky[c] as i32).abs() > 8))
            .count();
        terrain as f64 / (240.0 * 135.0)
    };
    let now = covered(&[]);
    assert!(now > 0.4, "terrain on {:.1} % of the image", now * 100.0);
    let old = covered(&["--vertical-scale", "100.75"]);
    assert!(old < 0.02, "the old scale: {:.1} %", old * 100.0);
}
