//! The gallery: one image per noise kind plus a contact sheet, README's run command for now.
//! Each kind is written as a normalized 16-bit PNG (`<kind>.png`) and drawn, shaded as relief, into
//! `contact_sheet.png` (4 columns x 2 rows in `NoiseKind::ALL` order, named under each tile).

use crate::noise::NoiseKind;
use crate::terrain::formats::min_max;

/// A hillshaded, height-tinted RGBA8 rendering of a `size` x `size` grid, downsampled to `tile`.
pub fn relief_tile(heights: &[f32], size: u32, tile: u32) -> Vec<u8> {
    let (lo, hi) = min_max(heights);
    let range = if hi > lo { hi - lo } else { 1.0 };
    let step = (size / tile).max(1) as usize;
    let n = size as usize;
    let at = |x: usize, y: usize| (heights[y.min(n - 1) * n + x.min(n - 1)] - lo) / range;
    // Relief: vertical exaggeration relative to the tile so every kind reads as terrain.
    let exaggeration = tile as f32 * 0.3;
    let light = {
        let l = [-1.0f32, -1.0, 1.2];
        let len = (l[0] * l[0] + l[1] * l[1] + l[2] * l[2]).sqrt();
        l.map(|c| c / len)
    };
    let mut rgba = Vec::with_capacity((tile * tile * 4) as usize);
    for ty in 0..tile as usize {
        for tx in 0..tile as usize {
            let (x, y) = (tx * step, ty * step);
            let h = at(x, y);
            let dx = (at(x + step, y) - at(x.saturating_sub(step), y)) * exaggeration / 2.0;
            let dy = (at(x, y + step) - at(x, y.saturating_sub(step))) * exaggeration / 2.0;
            let normal = {
                let v = [-dx, -dy, 1.0];
                let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
                v.map(|c| c / len)
            };
            let shade = (normal[0] * light[0] + normal[1] * light[1] + normal[2] * light[2])
                .clamp(0.0, 1.0);
            let tint = hypsometric(h);
            let lit = 0.25 + 0.75 * shade;
            rgba.extend(tint.map(|c| (c * lit * 255.0).round().clamp(0.0, 255.0) as u8));
            rgba.push(255);
        }
    }
    rgba
}

/// Low green, mid brown, high grey-white.
fn hypsometric(h: f32) -> [f32; 3] {
    const STOPS: [(f32, [f32; 3]); 4] = [
        (0.0, [0.20, 0.36, 0.20]),
        (0.45, [0.55, 0.50, 0.32]),
        (0.75, [0.52, 0.44, 0.38]),
        (1.0, [0.95, 0.95, 0.95]),
    ];
    for pair in STOPS.windows(2) {
        let ((a, ca), (b, cb)) = (pair[0], pair[1]);
        if h <= b {
            let t = ((h - a) / (b - a)).clamp(0.0, 1.0);
            return [0, 1, 2].map(|i| ca[i] + (cb[i] - ca[i]) * t);
        }
    }
    STOPS[3].1
}

/// Tile size, margin and label band of the contact sheet.
pub const SHEET_TILE: u32 = 256;
const MARGIN: u32 = 8;
const LABEL: u32 = 16;
const COLUMNS: u32 = 4;

/// Assembles the contact sheet from `(kind, tile rgba)` pairs; returns (width, height, rgba).
pub fn contact_sheet(tiles: &[(NoiseKind, Vec<u8>)]) -> (u32, u32, Vec<u8>) {
    let rows = (tiles.len() as u32).div_ceil(COLUMNS);
    let width = COLUMNS * (SHEET_TILE + MARGIN) + MARGIN;
    let height = rows * (SHEET_TILE + MARGIN + LABEL) + MARGIN;
    let mut rgba = [24u8, 24, 28, 255].repeat((width * height) as usize);
    for (i, (kind, tile)) in tiles.iter().enumerate() {
        let (col, row) = (i as u32 % COLUMNS, i as u32 / COLUMNS);
        let x0 = MARGIN + col * (SHEET_TILE + MARGIN);
        let y0 = MARGIN + row * (SHEET_TILE + MARGIN + LABEL);
        for y in 0..SHEET_TILE {
            let src = (y * SHEET_TILE * 4) as usize..((y + 1) * SHEET_TILE * 4) as usize;
            let dst = (((y0 + y) * width + x0) * 4) as usize;
            rgba[dst..dst + (SHEET_TILE * 4) as usize].copy_from_slice(&tile[src]);
        }
        draw_text(&mut rgba, width, x0 + 2, y0 + SHEET_TILE + 4, kind.name());
    }
    (width, height, rgba)
}

/// 5x7 glyphs of the letters the kind names use; each row is 5 bits, MSB left.
fn glyph(c: char) -> [u8; 7] {
    match c {
        'a' => [0, 0, 14, 1, 15, 17, 15],
        'b' => [16, 16, 22, 25, 17, 17, 30],
        'd' => [1, 1, 13, 19, 17, 17, 15],
        'e' => [0, 0, 14, 17, 31, 16, 14],
        'f' => [6, 9, 8, 28, 8, 8, 8],
        'g' => [0, 15, 17, 17, 15, 1, 14],
        'i' => [4, 0, 12, 4, 4, 4, 14],
        'j' => [2, 0, 6, 2, 2, 18, 12],
        'l' => [12, 4, 4, 4, 4, 4, 14],
        'm' => [0, 0, 26, 21, 21, 17, 17],
        'n' => [0, 0, 22, 25, 17, 17, 17],
        'o' => [0, 0, 14, 17, 17, 17, 14],
        'p' => [0, 0, 30, 17, 30, 16, 16],
        'q' => [0, 0, 13, 19, 15, 1, 1],
        'r' => [0, 0, 22, 25, 16, 16, 16],
        's' => [0, 0, 14, 16, 14, 1, 30],
        'v' => [0, 0, 17, 17, 17, 10, 4],
        'w' => [0, 0, 17, 17, 21, 21, 10],
        'y' => [0, 0, 17, 17, 15, 1, 14],
        _ => [0; 7],
    }
}

fn draw_text(rgba: &mut [u8], width: u32, x0: u32, y0: u32, text: &str) {
    for (i, c) in text.chars().enumerate() {
        for (row, bits) in glyph(c).iter().enumerate() {
            for col in 0..5u32 {
                if bits & (16 >> col) != 0 {
                    let (x, y) = (x0 + i as u32 * 6 + col, y0 + row as u32);
                    let at = ((y * width + x) * 4) as usize;
                    if at + 4 <= rgba.len() {
                        rgba[at..at + 4].copy_from_slice(&[230, 230, 230, 255]);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_name_has_glyphs() {
        for kind in NoiseKind::ALL {
            for c in kind.name().chars() {
                assert_ne!(glyph(c), [0; 7], "no glyph for '{c}' of {}", kind.name());
            }
        }
    }

    #[test]
    fn relief_shades_slopes_facing_the_light_brighter() {
        // A ramp rising to the east faces west, towards the light from the north-west.
        let n = 16u32;
        let ramp_east: Vec<f32> = (0..n * n).map(|i| (i % n) as f32).collect();
        let ramp_west: Vec<f32> = (0..n * n).map(|i| (n - 1 - i % n) as f32).collect();
        let mid = ((8 * n + 8) * 4) as usize;
        let (e, w) = (relief_tile(&ramp_east, n, n), relief_tile(&ramp_west, n, n));
        let lum = |t: &[u8]| u32::from(t[mid]) + u32::from(t[mid + 1]) + u32::from(t[mid + 2]);
        assert!(
            lum(&e) > lum(&w),
            "west-facing slope should be lit: {} vs {}",
            lum(&e),
            lum(&w)
        );
    }
}
