//! Height files: every format round-trips (bit-exact for float formats, within one quantization
//! step for integer ones), third-party readers (ImageMagick `identify`, OpenEXR `exrheader`)
//! read what we write with the right size and depth, and hostile files (truncated, corrupt,
//! empty, wrong size, dimension bombs, NaN/Inf) give a one-line error naming the file and the
//! problem and leave existing outputs untouched.

mod common;

use common::{max_diff, scarp, scarp_ok, stderr};
use scarp::terrain::formats::{read, write, Endian, Heights, ReadOptions, WriteOptions};
use std::path::Path;
use std::process::Command;

fn grid(w: u32, h: u32, lo: f32, hi: f32) -> Heights {
    let values = (0..w * h)
        .map(|i| {
            let (x, y) = ((i % w) as f32, (i / w) as f32);
            let t = ((x * 0.37).sin() * (y * 0.21).cos() * 0.5 + 0.5).clamp(0.0, 1.0);
            lo + t * (hi - lo)
        })
        .collect();
    Heights {
        width: w,
        height: h,
        values,
    }
}

#[test]
fn every_format_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let (lo, hi) = (-120.0f32, 850.0f32);
    let g = grid(97, 61, lo, hi);
    let range = Some((lo, hi));
    // (file, bits, endian, largest error allowed)
    let step16 = (hi - lo) / 65535.0;
    let cases: Vec<(&str, Option<u8>, Endian, f32)> = vec![
        ("a.r32", None, Endian::Little, 0.0),
        ("a.exr", None, Endian::Little, 0.0),
        ("a.tif", None, Endian::Little, 0.0),
        ("a16.tif", Some(16), Endian::Little, step16 * 0.51),
        ("a.png", None, Endian::Little, step16 * 0.51),
        ("a8.png", Some(8), Endian::Little, (hi - lo) / 255.0 * 0.51),
        ("le.r16", None, Endian::Little, step16 * 0.51),
        ("be.raw", None, Endian::Big, step16 * 0.51),
    ];
    for (name, bits, endian, tol) in cases {
        let p = dir.path().join(name);
        let report = write(
            &p,
            &g,
            &WriteOptions {
                range,
                endian,
                bits,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(report.clamped, 0, "{name}");
        let back = read(
            &p,
            &ReadOptions {
                size: Some((97, 61)),
                range: (lo, hi),
                endian,
            },
        )
        .unwrap();
        assert_eq!((back.width, back.height), (97, 61), "{name}");
        let err = max_diff(&back.values, &g.values);
        if tol == 0.0 {
            assert!(back.values == g.values, "{name}: not bit-exact ({err})");
        } else {
            assert!(err <= tol, "{name}: error {err} > {tol}");
        }
    }
    // Byte order matters: the big-endian file read as little-endian differs.
    let be = read(
        &dir.path().join("be.raw"),
        &ReadOptions {
            size: Some((97, 61)),
            range: (lo, hi),
            endian: Endian::Little,
        },
    )
    .unwrap();
    assert!(max_diff(&be.values, &g.values) > 1.0);
}

#[test]
fn integer_exports_without_a_range_use_the_data_range_and_clamp_outside_a_given_one() {
    let dir = tempfile::tempdir().unwrap();
    let g = grid(20, 10, 3.0, 7.0);
    let p = dir.path().join("x.png");
    let r = write(&p, &g, &WriteOptions::default()).unwrap();
    let (lo, hi) = r.range.unwrap();
    assert!(
        (lo - 3.0).abs() < 0.05 && (hi - 7.0).abs() < 0.05,
        "{lo}..{hi}"
    );
    let img = image::open(&p).unwrap().to_luma16().into_raw();
    assert_eq!(*img.iter().min().unwrap(), 0);
    assert_eq!(*img.iter().max().unwrap(), 65535);
    let r = write(
        &p,
        &g,
        &WriteOptions {
            range: Some((4.0, 6.0)),
            ..Default::default()
        },
    )
    .unwrap();
    let outside = g
        .values
        .iter()
        .filter(|&&v| !(4.0..=6.0).contains(&v))
        .count();
    assert_eq!(r.clamped, outside as u64);
    assert!(outside > 0);
}

#[test]
fn raw_sizes_are_given_or_inferred_from_square_files() {
    let dir = tempfile::tempdir().unwrap();
    let sq = grid(33, 33, 0.0, 1.0);
    let p = dir.path().join("sq.r16");
    write(&p, &sq, &WriteOptions::default()).unwrap();
    let back = read(&p, &ReadOptions::default()).unwrap();
    assert_eq!((back.width, back.height), (33, 33));
    let rect = grid(30, 20, 0.0, 1.0);
    let p = dir.path().join("rect.r32");
    write(&p, &rect, &WriteOptions::default()).unwrap();
    let e = read(&p, &ReadOptions::default()).unwrap_err().to_string();
    assert!(e.contains("rect.r32") && e.contains("--size"), "{e}");
    let e = read(
        &p,
        &ReadOptions {
            size: Some((20, 30)),
            ..Default::default()
        },
    );
    assert!(e.is_ok(), "same byte count, other shape: accepted as asked");
    let e = read(
        &p,
        &ReadOptions {
            size: Some((31, 20)),
            ..Default::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("2400 bytes, but 31x20 needs 2480"), "{e}");
}

fn tool(cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd} (installed by .ci/setup): {e}"));
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn third_party_readers_see_the_right_size_and_depth() {
    let dir = tempfile::tempdir().unwrap();
    let g = grid(123, 45, 0.0, 100.0);
    for (name, bits, depth) in [
        ("a.png", None, "16"),
        ("a8.png", Some(8), "8"),
        ("a.tif", None, "32"),
        ("a16.tif", Some(16), "16"),
    ] {
        let p = dir.path().join(name);
        write(
            &p,
            &g,
            &WriteOptions {
                bits,
                ..Default::default()
            },
        )
        .unwrap();
        let info = tool(
            "identify",
            &["-format", "%w %h %z %[channels]", p.to_str().unwrap()],
        );
        assert_eq!(info.trim(), format!("123 45 {depth} gray"), "{name}");
    }
    let p = dir.path().join("a.exr");
    write(&p, &g, &WriteOptions::default()).unwrap();
    let info = tool("exrheader", &[p.to_str().unwrap()]);
    assert!(info.contains("Y, 32-bit floating-point"), "{info}");
    assert!(
        info.contains("dataWindow (type box2i): (0 0) - (122 44)"),
        "{info}"
    );
}

/// CRC-32 (PNG chunks).
fn crc32(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
    }
    !c
}

#[test]
fn hostile_files_give_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let g = grid(40, 30, 0.0, 1.0);
    for name in ["ok.png", "ok.exr", "ok.tif", "ok.r32"] {
        write(&d.join(name), &g, &WriteOptions::default()).unwrap();
    }
    let bytes = |n: &str| std::fs::read(d.join(n)).unwrap();
    // Truncated files.
    for n in ["ok.png", "ok.exr", "ok.tif"] {
        let b = bytes(n);
        std::fs::write(d.join(format!("cut-{n}")), &b[..b.len() / 2]).unwrap();
    }
    // Garbage with the right extension, and empty files.
    std::fs::write(d.join("junk.png"), b"definitely not a png file at all").unwrap();
    std::fs::write(d.join("junk.exr"), [0x76, 0x2f, 0x31, 0x01, 9, 9, 9]).unwrap();
    std::fs::write(d.join("junk.tif"), b"II*\0garbage").unwrap();
    std::fs::write(d.join("empty.png"), b"").unwrap();
    std::fs::write(d.join("empty.r16"), b"").unwrap();
    // A dimension bomb: a valid PNG whose header claims 70000 x 70000.
    let mut bomb = bytes("ok.png");
    bomb[16..20].copy_from_slice(&70000u32.to_be_bytes());
    bomb[20..24].copy_from_slice(&70000u32.to_be_bytes());
    let crc = crc32(&bomb[12..29]);
    bomb[29..33].copy_from_slice(&crc.to_be_bytes());
    std::fs::write(d.join("bomb.png"), &bomb).unwrap();
    // NaN and Inf heights.
    let mut nan = g.clone();
    nan.values[5 * 40 + 7] = f32::NAN;
    let raw: Vec<u8> = nan.values.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(d.join("nan.r32"), raw).unwrap();
    // An RGB PNG.
    image::save_buffer(
        d.join("rgb.png"),
        &[0u8; 4 * 4 * 3],
        4,
        4,
        image::ColorType::Rgb8,
    )
    .unwrap();

    type Case<'a> = (&'a str, Option<(u32, u32)>, &'a str);
    let cases: [Case; 12] = [
        ("cut-ok.png", None, "not a readable PNG"),
        ("cut-ok.exr", None, "not a readable OpenEXR file"),
        ("cut-ok.tif", None, "not a readable TIFF"),
        ("junk.png", None, "not a readable PNG"),
        ("junk.exr", None, "not a readable OpenEXR file"),
        ("junk.tif", None, "not a readable TIFF"),
        ("empty.png", None, "empty file"),
        ("empty.r16", None, "empty file"),
        ("bomb.png", None, "not a readable PNG"),
        (
            "nan.r32",
            Some((40, 30)),
            "non-finite height (NaN) at texel (7, 5)",
        ),
        ("rgb.png", None, "must be grayscale"),
        ("ok.png", Some((41, 30)), "is 40x30, but --size says 41x30"),
    ];
    for (name, size, expect) in cases {
        let e = read(
            &d.join(name),
            &ReadOptions {
                size,
                ..Default::default()
            },
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains(name), "{name}: {e}");
        assert!(e.contains(expect), "{name}: {e}");
        assert_eq!(e.lines().count(), 1, "{name}: {e}");
    }
    // Writing NaN is refused before anything is written.
    let out = d.join("out.r32");
    std::fs::write(&out, b"previous").unwrap();
    let e = write(&out, &nan, &WriteOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("non-finite"), "{e}");
    assert_eq!(std::fs::read(&out).unwrap(), b"previous");
}

#[test]
fn an_interrupted_save_leaves_the_previous_file_intact() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("doc.r32");
    std::fs::write(&target, b"the previous save").unwrap();
    let e = scarp::atomic_file::write_atomic(&target, |w| {
        std::io::Write::write_all(w, b"half of the new").unwrap();
        Err::<(), String>("disk full (simulated)".into())
    })
    .unwrap_err();
    assert!(e.contains("disk full"));
    assert_eq!(std::fs::read(&target).unwrap(), b"the previous save");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "temporary files left behind");
}

#[test]
fn convert_chains_formats_and_rejects_bad_input_without_touching_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = |n: &str| d.join(n).to_str().unwrap().to_string();
    let g = grid(64, 40, 10.0, 510.0);
    write(Path::new(&p("src.r32")), &g, &WriteOptions::default()).unwrap();
    // r32 -> exr -> tif -> r16 (big-endian, range) -> png -> r32.
    let steps: [(&str, &str, &[&str]); 5] = [
        ("src.r32", "a.exr", &["--size", "64x40"]),
        ("a.exr", "b.tif", &[]),
        ("b.tif", "c.r16", &["--range", "0,1000", "--endian", "big"]),
        (
            "c.r16",
            "d.png",
            &["--size", "64x40", "--range", "0,1000", "--endian", "big"],
        ),
        ("d.png", "e.r32", &["--range", "0,1000"]),
    ];
    for (from, to, extra) in steps {
        let mut args = vec!["convert".to_string(), p(from), p(to)];
        args.extend(extra.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = scarp(&args);
        assert!(
            out.status.success(),
            "{from} -> {to}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let back = read(
        Path::new(&p("e.r32")),
        &ReadOptions {
            size: Some((64, 40)),
            ..Default::default()
        },
    )
    .unwrap();
    // Two 16-bit quantizations over 0..1000.
    assert!(max_diff(&back.values, &g.values) <= 1000.0 / 65535.0 + 1e-3);

    std::fs::write(p("keep.png"), b"an earlier export").unwrap();
    std::fs::write(p("bad.png"), b"garbage").unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec![p("missing.r32"), p("keep.png")], "No such file"),
        (vec![p("bad.png"), p("keep.png")], "not a readable PNG"),
        (vec![p("src.r32"), p("keep.png")], "not a square"),
        (
            vec![p("src.r32"), p("keep.jpg")],
            "unknown height file format",
        ),
        (
            vec![p("a.exr"), p("keep.png"), "--bits".into(), "12".into()],
            "12 bits",
        ),
        (
            vec![p("a.exr"), p("keep.png"), "--range".into(), "5,1".into()],
            "MIN must be below MAX",
        ),
    ];
    for (args, expect) in cases {
        let mut all = vec!["convert".to_string()];
        all.extend(args);
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let out = scarp(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{all:?}");
        assert!(err.contains(expect), "{all:?}: {err}");
        assert_eq!(std::fs::read(p("keep.png")).unwrap(), b"an earlier export");
    }
}

/// Finds `needle` in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len())
        .position(|w| w == needle)
        .expect("attribute present")
}

#[test]
fn exr_headers_claiming_too_many_samples_are_refused_before_decoding() {
    use exr::prelude::*;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("four.exr");
    // A small four-channel image, then its data window patched to 10000 x 10000: 1e8 texels
    // pass the size check, 4e8 samples must not reach the decoder's allocations.
    let channels = SpecificChannels::build()
        .with_channel("A")
        .with_channel("B")
        .with_channel("G")
        .with_channel("R")
        .with_pixel_fn(|_p: Vec2<usize>| (0.5f32, 0.5f32, 0.5f32, 0.5f32));
    Image::from_channels((4, 4), channels)
        .write()
        .to_file(&p)
        .unwrap();
    let mut bytes = std::fs::read(&p).unwrap();
    let at = find(&bytes, b"dataWindow\0box2i\0") + b"dataWindow\0box2i\0".len() + 4;
    bytes[at + 8..at + 12].copy_from_slice(&9999i32.to_le_bytes());
    bytes[at + 12..at + 16].copy_from_slice(&9999i32.to_le_bytes());
    std::fs::write(&p, &bytes).unwrap();
    let e = scarp::terrain::formats::read(&p, &ReadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("four.exr"), "{e}");
    assert!(e.contains("samples in all layers and channels"), "{e}");
}

#[test]
fn regions_and_edge_sharing_tiles_round_trip_through_convert() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let g = grid(13, 9, -2.0, 7.0);
    write(Path::new(&p("whole.r32")), &g, &WriteOptions::default()).unwrap();
    let r32 = |name: &str, w: u32, h: u32| {
        read(
            Path::new(&p(name)),
            &ReadOptions {
                size: Some((w, h)),
                ..Default::default()
            },
        )
        .unwrap()
    };
    // A region equals the same crop of the whole.
    scarp_ok(&[
        "convert",
        &p("whole.r32"),
        &p("crop.r32"),
        "--size",
        "13x9",
        "--region",
        "2,1,5,4",
    ]);
    let crop = r32("crop.r32", 5, 4);
    for y in 0..4 {
        for x in 0..5 {
            assert_eq!(crop.values[y * 5 + x], g.values[(y + 1) * 13 + x + 2]);
        }
    }
    // 3x2 tiles of 5x5 that share their edges, named _x{i}_y{j}.
    scarp_ok(&[
        "convert",
        &p("whole.r32"),
        &p("t.r32"),
        "--size",
        "13x9",
        "--tiles",
        "3x2",
    ]);
    let t10 = r32("t_x1_y0.r32", 5, 5);
    let t00 = r32("t_x0_y0.r32", 5, 5);
    for y in 0..5 {
        assert_eq!(
            t00.values[y * 5 + 4],
            t10.values[y * 5],
            "shared edge, row {y}"
        );
        assert_eq!(t10.values[y * 5 + 4], g.values[y * 13 + 8]);
    }
    // Stitched back: the whole, bit for bit, as a height file and as a project.
    let pattern = p("t_x{i}_y{j}.r32");
    scarp_ok(&[
        "convert",
        &pattern,
        &p("back.r32"),
        "--size",
        "5x5",
        "--tiles",
        "3x2",
    ]);
    assert_eq!(
        std::fs::read(p("back.r32")).unwrap(),
        std::fs::read(p("whole.r32")).unwrap()
    );
    scarp_ok(&[
        "convert",
        &pattern,
        &p("back.scarp"),
        "--size",
        "5x5",
        "--tiles",
        "3x2",
    ]);
    let project = scarp::project::v2::open(Path::new(&p("back.scarp"))).unwrap();
    let mut dense = vec![f32::NAN; 13 * 9];
    for (id, heights) in &project.page_heights().unwrap() {
        project
            .meta
            .document
            .page_into_dense(heights, *id, &mut dense);
    }
    assert_eq!(dense, g.values);
    // Integer tiles share the whole's height range, so their shared edges agree when stitched.
    scarp_ok(&[
        "convert",
        &p("whole.r32"),
        &p("q.png"),
        "--size",
        "13x9",
        "--tiles",
        "3x2",
    ]);
    let out = scarp_ok(&[
        "convert",
        &p("q_x{i}_y{j}.png"),
        &p("q.r32"),
        "--tiles",
        "3x2",
    ]);
    assert!(!stderr(&out).contains("differ"), "{}", stderr(&out));
    // A size that does not split, and a missing tile, are named before anything is written.
    let out = scarp(&[
        "convert",
        &p("whole.r32"),
        &p("u.r32"),
        "--size",
        "13x9",
        "--tiles",
        "5x2",
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("13 texels (width)"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_file(p("t_x2_y1.r32")).unwrap();
    let out = scarp(&[
        "convert",
        &pattern,
        &p("v.r32"),
        "--size",
        "5x5",
        "--tiles",
        "3x2",
    ]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("t_x2_y1.r32"), "{}", stderr(&out));
    assert!(!Path::new(&p("v.r32")).exists());
}

/// The fixtures' grid (tests/fixtures/geotiff/README.md).
fn geotiff_value(x: usize, y: usize) -> f32 {
    (100.0 * (x as f64 / 5.0).sin() + 50.0 * (y as f64 / 3.0).cos() + 200.0).round() as f32
}

#[test]
fn geotiffs_written_by_gdal_read_as_elevations_with_nodata_filled() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/geotiff");
    let voids = [(5, 5), (6, 5), (5, 6), (6, 6), (30, 17)];
    for (file, scale, nodata) in [
        ("int16-lzw-tiled-nodata.tif", 1.0, true),
        ("int32-deflate-nodata.tif", 1.0, true),
        ("float32-deflate-pred3-nodata.tif", 8.0, true),
        ("float32-deflate-pred3.tif", 8.0, false),
    ] {
        let (h, report) = scarp::terrain::formats::read_reporting(
            &dir.join(file),
            &ReadOptions::default(),
            &mut |_, _| {},
        )
        .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!((h.width, h.height), (40, 24), "{file}");
        assert_eq!(report.voids_filled, if nodata { 5 } else { 0 }, "{file}");
        for y in 0..24 {
            for x in 0..40 {
                let got = h.values[y * 40 + x];
                if !voids.contains(&(x, y)) {
                    assert_eq!(got, geotiff_value(x, y) / scale, "{file} at {x},{y}");
                } else if !nodata {
                    assert_eq!(got, -9999.0, "{file} at {x},{y}");
                } else {
                    // Filled from the neighbours: within their range.
                    let near: Vec<f32> = [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)]
                        .iter()
                        .filter(|p| !voids.contains(p))
                        .map(|&(a, b)| geotiff_value(a, b) / scale)
                        .collect();
                    let (lo, hi) = near
                        .iter()
                        .fold((f32::MAX, f32::MIN), |(l, h), &v| (l.min(v), h.max(v)));
                    assert!(
                        got >= lo - 30.0 / scale && got <= hi + 30.0 / scale,
                        "{file} at {x},{y}: {got}"
                    );
                }
            }
        }
    }
}

#[test]
fn srtm_hgt_reads_big_endian_metres_and_fills_voids() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("N47E011.hgt");
    let metre = |x: usize, y: usize| ((x * 7 + y * 3) % 4000) as i16 - 400;
    let mut bytes = Vec::with_capacity(1201 * 1201 * 2);
    for y in 0..1201 {
        for x in 0..1201 {
            let v = if (x, y) == (600, 600) {
                -32768
            } else {
                metre(x, y)
            };
            bytes.extend_from_slice(&v.to_be_bytes());
        }
    }
    std::fs::write(&p, &bytes).unwrap();
    let (h, report) =
        scarp::terrain::formats::read_reporting(&p, &ReadOptions::default(), &mut |_, _| {})
            .unwrap();
    assert_eq!((h.width, h.height), (1201, 1201));
    assert_eq!(report.voids_filled, 1);
    assert_eq!(h.values[0], f32::from(metre(0, 0)));
    assert_eq!(h.values[1201 * 1200 + 1200], f32::from(metre(1200, 1200)));
    let around = [(599, 600), (601, 600), (600, 599), (600, 601)]
        .map(|(x, y)| f32::from(metre(x, y)))
        .iter()
        .sum::<f32>()
        / 4.0;
    assert_eq!(h.values[600 * 1201 + 600], around);
    // A wrong size is named, and .hgt is not an output.
    std::fs::write(&p, &bytes[..1000]).unwrap();
    let e = read(&p, &ReadOptions::default()).unwrap_err().to_string();
    assert!(e.contains("N47E011.hgt") && e.contains("1201x1201"), "{e}");
    let out = scarp(&[
        "convert",
        p.to_str().unwrap(),
        dir.path().join("x.hgt").to_str().unwrap(),
    ]);
    assert!(
        stderr(&out).contains("read, not written"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_journal_starts_from_a_tile_set_as_from_the_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let g = grid(257, 129, 0.1, 0.6);
    write(Path::new(&p("whole.r32")), &g, &WriteOptions::default()).unwrap();
    scarp_ok(&[
        "convert",
        &p("whole.r32"),
        &p("t.r32"),
        "--size",
        "257x129",
        "--tiles",
        "4x2",
    ]);
    let journal = |initial: &str| {
        format!(
            r#"{{"version": 1, "document": {{"width": 257, "height": 129, "page_size": 128,
                 "initial": {initial}}},
                 "steps": [{{"stroke": {{"brush": {{"type": "raise", "radius": 40, "strength": 0.2}},
                   "samples": [{{"x": 30, "y": 40, "pressure": 1.0, "t": 0.0}},
                               {{"x": 200, "y": 90, "pressure": 1.0, "t": 0.1}}]}}}}]}}"#
        )
    };
    std::fs::write(p("file.json"), journal(r#"{"file": "whole.r32"}"#)).unwrap();
    std::fs::write(
        p("tiles.json"),
        journal(r#"{"tiles": {"pattern": "t_x{i}_y{j}.r32", "grid": [4, 2]}}"#),
    )
    .unwrap();
    scarp_ok(&["apply", "--journal", &p("file.json"), "--out", &p("a.r32")]);
    scarp_ok(&["apply", "--journal", &p("tiles.json"), "--out", &p("b.r32")]);
    assert_eq!(
        std::fs::read(p("a.r32")).unwrap(),
        std::fs::read(p("b.r32")).unwrap()
    );
    // A tile set that does not make the document is refused, naming why.
    std::fs::write(
        p("bad.json"),
        journal(r#"{"tiles": {"pattern": "t_x{i}_y{j}.r32", "grid": [5, 2]}}"#),
    )
    .unwrap();
    let out = scarp(&["apply", "--journal", &p("bad.json"), "--out", &p("c.r32")]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("document.initial.tiles"),
        "{}",
        stderr(&out)
    );
}

/// A 65536² document (past one file's 2^28 texels) with a stroke across a page corner, as a
/// project: its crops and tiles export from the pages, and agree with each other.
#[test]
fn projects_past_one_file_export_as_regions_and_tiles() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let journal = r#"{"version": 1,
      "document": {"width": 65536, "height": 65536, "format": "r32f", "page_size": 256,
                   "height_min": 0.0, "height_max": 1.0, "initial": {"flat": 0.2}},
      "steps": [{"stroke": {"brush": {"type": "noise", "kind": "ridged", "radius": 40,
                 "strength": 0.5, "seed": 3, "octaves": 5},
                 "samples": [{"x": 30700, "y": 30700}, {"x": 30760, "y": 30740}]}}]}"#;
    std::fs::write(p("big.json"), journal).unwrap();
    scarp_ok(&[
        "apply",
        "--journal",
        &p("big.json"),
        "--out",
        &p("big.scarp"),
    ]);
    let size = std::fs::metadata(p("big.scarp")).unwrap().len();
    assert!(
        size < 2 << 20,
        "a sparse 65536² project is small: {size} bytes"
    );
    // The whole document is refused as one file, by size, before anything is written.
    let out = scarp(&["convert", &p("big.scarp"), &p("whole.r32")]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("too large"), "{}", stderr(&out));
    assert!(!Path::new(&p("whole.r32")).exists());
    // A crop around the stroke, and the same crop split into 3 x 2 edge-sharing tiles.
    let region = "30600,30650,241,201";
    scarp_ok(&[
        "convert",
        &p("big.scarp"),
        &p("crop.r32"),
        "--region",
        region,
    ]);
    let r32 = |path: &str, w: u32, h: u32| {
        let options = ReadOptions {
            size: Some((w, h)),
            ..Default::default()
        };
        read(Path::new(path), &options).unwrap().values
    };
    let crop = r32(&p("crop.r32"), 241, 201);
    assert_eq!(crop.len(), 241 * 201);
    assert!(crop.iter().any(|&h| h != 0.2) && crop.contains(&0.2));
    scarp_ok(&[
        "convert",
        &p("big.scarp"),
        &p("t.r32"),
        "--region",
        region,
        "--tiles",
        "3x2",
    ]);
    scarp_ok(&[
        "convert",
        &p("t_x{i}_y{j}.r32"),
        &p("stitched.r32"),
        "--size",
        "81x101",
        "--tiles",
        "3x2",
    ]);
    assert_eq!(r32(&p("stitched.r32"), 241, 201), crop);
}
