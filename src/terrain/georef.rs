//! Where a height file lies on the Earth, as far as a document needs it: the texel size in
//! metres and the height unit, from a GeoTIFF's pixel scale (or transformation) and GeoKeys, or
//! from an SRTM tile's size and name. Geographic texels (degrees) are measured on the WGS84
//! ellipsoid at the raster's centre latitude; their east-west and north-south sizes differ away
//! from the equator, and the document takes their mean (both are said in the note).

use crate::pages::{GeoPlacement, Units};
use std::f64::consts::PI;

/// WGS84: semi-major axis (m) and flattening.
const WGS84_A: f64 = 6_378_137.0;
const WGS84_F: f64 = 1.0 / 298.257_223_563;

/// Metres per degree of latitude (north-south) and of longitude (east-west) at latitude `lat`
/// degrees, on the WGS84 ellipsoid: the meridian's radius of curvature M and the parallel's
/// radius N·cos φ, times π/180.
pub fn metres_per_degree(lat: f64) -> (f64, f64) {
    let e2 = WGS84_F * (2.0 - WGS84_F);
    let phi = lat.to_radians();
    let w = (1.0 - e2 * phi.sin().powi(2)).sqrt();
    let m = WGS84_A * (1.0 - e2) / (w * w * w);
    let n = WGS84_A / w;
    (m * PI / 180.0, n * phi.cos() * PI / 180.0)
}

/// A file's georeference: the document's units and a line saying how they were found.
#[derive(Clone, Debug, PartialEq)]
pub struct Georef {
    pub units: Units,
    pub note: String,
}

/// Texels `dx` east-west by `dy` north-south metres: the mean where they differ.
fn texels(dx: f64, dy: f64, what: &str) -> (f64, String) {
    let mean = 0.5 * (dx + dy);
    let note = if (dx - dy).abs() > 1e-3 * mean {
        format!("{what}: texels {dx:.3} m east-west by {dy:.3} m north-south, {mean:.3} m used")
    } else {
        format!("{what}: texels of {mean:.3} m")
    };
    (mean, note)
}

/// GeoKey ids and values (GeoTIFF 1.0, section 6).
const GT_MODEL_TYPE: u16 = 1024;
const RASTER_TYPE: u16 = 1025;
const GEOGRAPHIC_TYPE: u16 = 2048;
const PROJECTED_CS_TYPE: u16 = 3072;
const PIXEL_IS_AREA: u16 = 1;
const PIXEL_IS_POINT: u16 = 2;
/// A GeoKey value meaning "user-defined" (no EPSG code).
const USER_DEFINED: u16 = 32767;
const PROJ_LINEAR_UNITS: u16 = 3076;
const VERTICAL_UNITS: u16 = 4099;
const MODEL_PROJECTED: u16 = 1;
const MODEL_GEOGRAPHIC: u16 = 2;
/// EPSG unit codes: metre, foot, US survey foot.
const LINEAR_UNITS: [(u16, f64, &str); 3] = [
    (9001, 1.0, "metres"),
    (9002, 0.3048, "feet"),
    (9003, 1200.0 / 3937.0, "US survey feet"),
];

/// The GeoKeys held directly in a GeoKeyDirectory (`keys`): (id, value) pairs.
fn geo_keys(keys: &[u16]) -> Vec<(u16, u16)> {
    let n = keys.get(3).copied().unwrap_or(0) as usize;
    keys.get(4..)
        .unwrap_or(&[])
        .chunks_exact(4)
        .take(n)
        // Location 0: the value is the key's own short.
        .filter(|k| k[1] == 0)
        .map(|k| (k[0], k[3]))
        .collect()
}

/// The tags of a GeoTIFF that place it.
#[derive(Clone, Debug, Default)]
pub struct GeoTags {
    /// ModelPixelScaleTag (33550): x, y, z.
    pub pixel_scale: Option<Vec<f64>>,
    /// ModelTiepointTag (33922): i, j, k, x, y, z (the first point).
    pub tiepoint: Option<Vec<f64>>,
    /// ModelTransformationTag (34264): a 4x4 matrix, row-major.
    pub transformation: Option<Vec<f64>>,
    /// GeoKeyDirectoryTag (34735).
    pub keys: Option<Vec<u16>>,
}

impl GeoTags {
    /// The georeference of a `width` x `height` raster with these tags, None without GeoKeys or
    /// a pixel size; Err for a georeference Scarp cannot measure (geocentric, unknown units).
    /// `metres`: the samples are elevations (signed or float), so the height unit is known.
    pub fn georef(&self, width: u32, height: u32, metres: bool) -> Result<Option<Georef>, String> {
        let Some(keys) = &self.keys else {
            return Ok(None);
        };
        let keys = geo_keys(keys);
        let key = |id: u16| keys.iter().find(|k| k.0 == id).map(|k| k.1);
        // A tie point or transformation names a texel's centre rather than its corner.
        let half = if key(RASTER_TYPE) == Some(PIXEL_IS_POINT) {
            0.5
        } else {
            0.0
        };
        // Pixel size in model units, the model y of the raster's centre row and the model
        // coordinates of texel (0, 0)'s top-left corner (None for a rotated raster).
        let (sx, sy, centre_y, corner) =
            match (&self.pixel_scale, &self.tiepoint, &self.transformation) {
                (Some(s), Some(t), _) if s.len() >= 2 && t.len() >= 6 => {
                    let centre = t[4] - (f64::from(height) / 2.0 - t[1]) * s[1];
                    let corner = [t[3] - (t[0] + half) * s[0], t[4] + (t[1] + half) * s[1]];
                    (s[0], s[1], centre, Some(corner))
                }
                (_, _, Some(m)) if m.len() >= 16 => {
                    let (w, h) = (f64::from(width), f64::from(height));
                    let centre = m[7] + m[4] * w / 2.0 + m[5] * h / 2.0;
                    let north_up = m[1] == 0.0 && m[4] == 0.0 && m[5] < 0.0;
                    let corner = [m[3] - half * m[0], m[7] - half * m[5]];
                    (
                        m[0].hypot(m[4]),
                        m[1].hypot(m[5]),
                        centre,
                        north_up.then_some(corner),
                    )
                }
                _ => return Ok(None),
            };
        if !(sx.is_finite() && sy.is_finite() && sx > 0.0 && sy > 0.0) {
            return Err(format!(
                "GeoTIFF pixel size {sx} x {sy}: not a positive size"
            ));
        }
        let model = key(GT_MODEL_TYPE);
        let epsg = match model {
            Some(MODEL_GEOGRAPHIC) => key(GEOGRAPHIC_TYPE),
            _ => key(PROJECTED_CS_TYPE),
        };
        let geo = match (epsg, corner) {
            (Some(epsg), Some(origin)) if epsg != USER_DEFINED => Some(GeoPlacement {
                epsg,
                geographic: model == Some(MODEL_GEOGRAPHIC),
                origin,
                pixel: [sx, sy],
            }),
            _ => None,
        };
        let (texel, note) = match model {
            Some(MODEL_GEOGRAPHIC) => {
                if !(-90.0..=90.0).contains(&centre_y) {
                    return Err(format!(
                        "GeoTIFF centre latitude {centre_y}: not a latitude"
                    ));
                }
                let (m_lat, m_lon) = metres_per_degree(centre_y);
                let what = format!("geographic, {sx:.7}° x {sy:.7}° at {centre_y:.3}°");
                texels(sx * m_lon, sy * m_lat, &what)
            }
            Some(MODEL_PROJECTED) => {
                let code = key(PROJ_LINEAR_UNITS).unwrap_or(9001);
                let Some(&(_, factor, name)) = LINEAR_UNITS.iter().find(|u| u.0 == code) else {
                    return Err(format!(
                        "GeoTIFF linear unit code {code}: not metres or feet"
                    ));
                };
                texels(sx * factor, sy * factor, &format!("projected, in {name}"))
            }
            Some(other) => {
                return Err(format!(
                    "GeoTIFF model type {other}: not projected or geographic"
                ))
            }
            None => return Ok(None),
        };
        let height_unit = if metres {
            let code = key(VERTICAL_UNITS).unwrap_or(9001);
            let Some(&(_, factor, _)) = LINEAR_UNITS.iter().find(|u| u.0 == code) else {
                return Err(format!(
                    "GeoTIFF vertical unit code {code}: not metres or feet"
                ));
            };
            Some(factor)
        } else {
            None
        };
        Ok(Some(Georef {
            units: Units {
                texel_size: Some(texel),
                height_unit,
                height_origin: None,
                geo,
            },
            note,
        }))
    }
}

/// The GeoTIFF tags that place a raster at `g`: the pixel scale, a tie point at texel (0, 0)'s
/// corner (PixelIsArea) and the GeoKeys naming the model type and the EPSG code.
pub fn geotiff_tags(g: &GeoPlacement) -> ([f64; 3], [f64; 6], Vec<u16>) {
    let (model, crs) = match g.geographic {
        true => (MODEL_GEOGRAPHIC, GEOGRAPHIC_TYPE),
        false => (MODEL_PROJECTED, PROJECTED_CS_TYPE),
    };
    // Version 1.1.0, three keys, sorted by id.
    #[rustfmt::skip]
    let keys = vec![
        1, 1, 0, 3,
        GT_MODEL_TYPE, 0, 1, model,
        RASTER_TYPE, 0, 1, PIXEL_IS_AREA,
        crs, 0, 1, g.epsg,
    ];
    let scale = [g.pixel[0], g.pixel[1], 0.0];
    let tiepoint = [0.0, 0.0, 0.0, g.origin[0], g.origin[1], 0.0];
    (scale, tiepoint, keys)
}

/// The georeference of an SRTM tile of `side` texels named `name` (`N36W084.hgt`: the tile
/// whose south-west corner is at 36° N, 84° W), heights in metres; None when the name does not
/// say its latitude.
pub fn hgt(name: &str, side: u32) -> Option<Georef> {
    let stem = name.rsplit('/').next()?.get(..3)?;
    let sign = match stem.as_bytes()[0].to_ascii_uppercase() {
        b'N' => 1.0,
        b'S' => -1.0,
        _ => return None,
    };
    let south: f64 = stem[1..].parse().ok()?;
    let centre = sign * south + 0.5;
    let arc_seconds = if side == 3601 { 1.0 } else { 3.0 };
    let degrees = arc_seconds / 3600.0;
    let (m_lat, m_lon) = metres_per_degree(centre);
    let what = format!("SRTM {arc_seconds}\" tile at {centre:.1}°");
    let (texel, note) = texels(degrees * m_lon, degrees * m_lat, &what);
    Some(Georef {
        units: Units::metres(texel),
        note,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metres_per_degree_match_the_wgs84_series() {
        // The usual series for WGS84 (lengths of a degree, to centimetres):
        // latitude 111132.954 − 559.822 cos 2φ + 1.175 cos 4φ,
        // longitude 111412.84 cos φ − 93.5 cos 3φ + 0.118 cos 5φ.
        for lat in [0.0f64, 12.5, 36.5, 45.0, -60.0, 80.0] {
            let p = lat.to_radians();
            let want_lat = 111_132.954 - 559.822 * (2.0 * p).cos() + 1.175 * (4.0 * p).cos();
            let want_lon = 111_412.84 * p.cos() - 93.5 * (3.0 * p).cos() + 0.118 * (5.0 * p).cos();
            let (m_lat, m_lon) = metres_per_degree(lat);
            assert!((m_lat - want_lat).abs() < 0.05, "{lat}: {m_lat} {want_lat}");
            assert!((m_lon - want_lon).abs() < 0.05, "{lat}: {m_lon} {want_lon}");
        }
    }

    #[test]
    fn hgt_names_give_their_latitude() {
        let g = hgt("dir/N36W084.hgt", 1201).unwrap();
        let (m_lat, m_lon) = metres_per_degree(36.5);
        let want = 0.5 * (m_lat + m_lon) * 3.0 / 3600.0;
        assert!((g.units.texel_size.unwrap() - want).abs() < 1e-9);
        assert_eq!(g.units.height_unit, Some(1.0));
        let s = hgt("S12E045.hgt", 3601).unwrap();
        let (m_lat, m_lon) = metres_per_degree(-11.5);
        let want = 0.5 * (m_lat + m_lon) / 3600.0;
        assert!((s.units.texel_size.unwrap() - want).abs() < 1e-9);
        assert!(hgt("tile.hgt", 1201).is_none());
    }

    #[test]
    fn geotiffs_without_geokeys_are_not_georeferenced() {
        let tags = GeoTags {
            pixel_scale: Some(vec![1.0, 1.0, 0.0]),
            tiepoint: Some(vec![0.0, 0.0, 0.0, 0.0, 24.0, 0.0]),
            ..Default::default()
        };
        assert_eq!(tags.georef(24, 24, true), Ok(None));
    }

    #[test]
    fn projected_feet_and_unknown_models() {
        // Version 1.1.0, 2 keys: projected, linear units US survey feet.
        let keys = vec![1, 1, 0, 2, 1024, 0, 1, 1, 3076, 0, 1, 9003];
        let tags = GeoTags {
            pixel_scale: Some(vec![10.0, 10.0, 0.0]),
            tiepoint: Some(vec![0.0, 0.0, 0.0, 500_000.0, 4e6, 0.0]),
            keys: Some(keys),
            ..Default::default()
        };
        let g = tags.georef(100, 100, false).unwrap().unwrap();
        assert!((g.units.texel_size.unwrap() - 10.0 * 1200.0 / 3937.0).abs() < 1e-12);
        assert_eq!(
            g.units.height_unit, None,
            "unsigned samples: no height unit"
        );
        let geocentric = GeoTags {
            keys: Some(vec![1, 1, 0, 1, 1024, 0, 1, 3]),
            ..tags
        };
        let e = geocentric.georef(100, 100, true).unwrap_err();
        assert!(e.contains("model type 3"), "{e}");
    }
}
