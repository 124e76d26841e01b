//! A heightfield document: its size, storage format, height range and page grid. Pages are
//! `page_size`² tiles from the top-left (edge pages are smaller); only pages that exist take
//! memory, so an untouched page of a flat document costs nothing.

/// How heights are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HeightFormat {
    /// 32-bit float, heights in world units.
    R32f,
    /// 16-bit UNORM mapped onto [height_min, height_max].
    R16,
}

/// Largest document side.
pub const MAX_SIDE: u32 = 1 << 20;
/// Page sizes allowed.
pub const PAGE_SIZES: std::ops::RangeInclusive<u32> = 128..=2048;
pub const DEFAULT_PAGE_SIZE: u32 = 512;

/// A page and its eight neighbours as (dx, dy), row by row: the slot order of the kernels that
/// bind a 3x3 neighbourhood (`layers/mask_rules.comp`, `render/lighting.comp`).
pub const NEIGHBOURHOOD: [(i64, i64); 9] = [
    (-1, -1),
    (0, -1),
    (1, -1),
    (-1, 0),
    (0, 0),
    (1, 0),
    (-1, 1),
    (0, 1),
    (1, 1),
];

/// What a document is.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DocumentDesc {
    pub width: u32,
    pub height: u32,
    pub format: HeightFormat,
    pub page_size: u32,
    pub height_min: f32,
    pub height_max: f32,
    /// Its physical scale, where known.
    #[serde(default, skip_serializing_if = "Units::is_unknown")]
    pub units: Units,
}

/// A document's physical scale: metres per texel across, metres per height unit up, and the
/// height in metres of height 0. What is None is not known: a texel is 1 m, and a height unit is
/// a quarter of the larger side (the look of every document made before units), origin 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Units {
    /// Metres per texel (square texels).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub texel_size: Option<f64>,
    /// Metres per height unit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub height_unit: Option<f64>,
    /// Metres at height 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub height_origin: Option<f64>,
    /// Where texel (0, 0) lies in a coordinate reference system, for documents that came from a
    /// georeferenced file (exports carry it on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geo: Option<GeoPlacement>,
}

/// A document's place in an EPSG coordinate reference system.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeoPlacement {
    /// The CRS's EPSG code.
    pub epsg: u16,
    /// Geographic (degrees of longitude and latitude) rather than projected.
    pub geographic: bool,
    /// The CRS coordinates (x east, y north) of texel (0, 0)'s top-left corner.
    pub origin: [f64; 2],
    /// CRS units per texel, east and south.
    pub pixel: [f64; 2],
}

impl GeoPlacement {
    /// The placement of the part of the document from texel (`x`, `y`).
    pub fn from_texel(&self, x: u32, y: u32) -> Self {
        Self {
            origin: [
                self.origin[0] + f64::from(x) * self.pixel[0],
                self.origin[1] - f64::from(y) * self.pixel[1],
            ],
            ..*self
        }
    }
}

impl Units {
    /// Heights in metres on texels of `texel_size` metres (a georeferenced DEM).
    pub fn metres(texel_size: f64) -> Self {
        Self {
            texel_size: Some(texel_size),
            height_unit: Some(1.0),
            ..Self::default()
        }
    }

    /// The units of the part of the document from texel (`x`, `y`) (a crop, a tile).
    pub fn from_texel(self, x: u32, y: u32) -> Self {
        Self {
            geo: self.geo.map(|g| g.from_texel(x, y)),
            ..self
        }
    }

    pub fn is_unknown(&self) -> bool {
        *self == Self::default()
    }

    /// `self`, with what `over` knows put over it.
    pub fn or(self, over: Units) -> Units {
        Units {
            texel_size: over.texel_size.or(self.texel_size),
            height_unit: over.height_unit.or(self.height_unit),
            height_origin: over.height_origin.or(self.height_origin),
            geo: over.geo.or(self.geo),
        }
    }

    /// Checks each value; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in [
            ("texel_size", self.texel_size),
            ("height_unit", self.height_unit),
        ] {
            if let Some(v) = v {
                if !(v.is_finite() && v > 0.0 && v <= MAX_UNIT_METRES) {
                    return Err(format!(
                        "{name} must be above 0 and at most {MAX_UNIT_METRES} metres, got {v}"
                    ));
                }
            }
        }
        if let Some(g) = self.geo {
            let finite = g.origin.iter().chain(&g.pixel).all(|v| v.is_finite());
            if !finite || g.pixel.iter().any(|&p| p <= 0.0) {
                return Err(format!(
                    "geo: origin must be finite and pixel above 0, got {:?} and {:?}",
                    g.origin, g.pixel
                ));
            }
        }
        if let Some(o) = self.height_origin {
            if !(o.is_finite() && o.abs() <= MAX_UNIT_METRES) {
                return Err(format!(
                    "height_origin must be within ±{MAX_UNIT_METRES} metres, got {o}"
                ));
            }
        }
        Ok(())
    }
}

/// The largest texel size, height unit and height origin a document may have, metres (the
/// Earth's circumference is 4e7 m).
pub const MAX_UNIT_METRES: f64 = 1e7;

/// A page's position in the page grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PageId {
    pub x: u32,
    pub y: u32,
}

/// A half-open rectangle of texels, `[x0, x1) x [y0, y1)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Rect {
    pub x0: i32,
    pub y0: i32,
    pub x1: i32,
    pub y1: i32,
}

/// A rectangle of texels from the document's top-left (x = column, y = row): a crop, a tile,
/// an erosion run's area.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

impl Region {
    /// The whole of a `width` x `height` grid.
    pub fn whole(width: u32, height: u32) -> Self {
        Self {
            x: 0,
            y: 0,
            width,
            height,
        }
    }

    /// Its texels.
    pub fn samples(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }

    /// This region's values of the `width`-wide row-major `grid`, row-major.
    pub fn cut(&self, grid: &[f32], width: u32) -> Vec<f32> {
        self.cut_channels(grid, width, 1)
    }

    /// The same of a grid of `channels` interleaved values a texel.
    pub fn cut_channels(&self, grid: &[f32], width: u32, channels: usize) -> Vec<f32> {
        let row = self.width as usize * channels;
        (self.y as usize..(self.y + self.height) as usize)
            .flat_map(|y| {
                let start = (y * width as usize + self.x as usize) * channels;
                grid[start..start + row].iter().copied()
            })
            .collect()
    }

    /// This region and a texel around it inside a `width` x `height` grid (what a texel's
    /// neighbours reach: a mesh's normals, a map's slopes), and this region within that.
    pub fn apron(&self, [width, height]: [u32; 2]) -> (Region, Region) {
        let (x, y) = (self.x.saturating_sub(1), self.y.saturating_sub(1));
        let around = Region {
            x,
            y,
            width: (self.x + self.width + 1).min(width) - x,
            height: (self.y + self.height + 1).min(height) - y,
        };
        let inner = Region {
            x: self.x - x,
            y: self.y - y,
            ..*self
        };
        (around, inner)
    }

    /// Writes `values` (this region's, row-major) into the `width`-wide row-major `grid`.
    pub fn paste(&self, grid: &mut [f32], width: u32, values: &[f32]) {
        let w = self.width as usize;
        for (row, y) in (self.y..self.y + self.height).enumerate() {
            let start = (y * width + self.x) as usize;
            grid[start..start + w].copy_from_slice(&values[row * w..(row + 1) * w]);
        }
    }

    /// The same texels as a page-store rectangle.
    pub fn rect(&self) -> Rect {
        Rect::new(
            self.x as i32,
            self.y as i32,
            (self.x + self.width) as i32,
            (self.y + self.height) as i32,
        )
    }
}

/// Checks that `region` lies inside a `width` x `height` grid and is not empty.
pub fn check_region(width: u32, height: u32, region: Region) -> Result<(), String> {
    let Region {
        x,
        y,
        width: w,
        height: h,
    } = region;
    if w == 0 || h == 0 {
        return Err(format!("region {w}x{h} is empty"));
    }
    if u64::from(x) + u64::from(w) > u64::from(width)
        || u64::from(y) + u64::from(h) > u64::from(height)
    {
        return Err(format!(
            "region {x},{y},{w},{h} does not lie inside the {width}x{height} grid"
        ));
    }
    Ok(())
}

impl Rect {
    pub const EMPTY: Rect = Rect {
        x0: 0,
        y0: 0,
        x1: 0,
        y1: 0,
    };

    pub fn new(x0: i32, y0: i32, x1: i32, y1: i32) -> Self {
        Self { x0, y0, x1, y1 }
    }

    pub fn is_empty(&self) -> bool {
        self.x1 <= self.x0 || self.y1 <= self.y0
    }

    pub fn width(&self) -> i32 {
        (self.x1 - self.x0).max(0)
    }

    pub fn height(&self) -> i32 {
        (self.y1 - self.y0).max(0)
    }

    pub fn intersect(&self, o: &Rect) -> Rect {
        let r = Rect::new(
            self.x0.max(o.x0),
            self.y0.max(o.y0),
            self.x1.min(o.x1),
            self.y1.min(o.y1),
        );
        if r.is_empty() {
            Rect::EMPTY
        } else {
            r
        }
    }

    /// Smallest rectangle holding both (an empty one adds nothing).
    pub fn union(&self, o: &Rect) -> Rect {
        match (self.is_empty(), o.is_empty()) {
            (true, _) => *o,
            (_, true) => *self,
            _ => Rect::new(
                self.x0.min(o.x0),
                self.y0.min(o.y0),
                self.x1.max(o.x1),
                self.y1.max(o.y1),
            ),
        }
    }

    /// Texels inside (0 when empty).
    pub fn texels(&self) -> u64 {
        if self.is_empty() {
            0
        } else {
            self.width() as u64 * self.height() as u64
        }
    }

    pub fn translate(&self, dx: i32, dy: i32) -> Rect {
        Rect::new(self.x0 + dx, self.y0 + dy, self.x1 + dx, self.y1 + dy)
    }

    /// Texels within `radius` of `center` (texel (x, y) sits at integer position (x, y)).
    pub fn around(center: [f32; 2], radius: f32) -> Rect {
        Rect::new(
            (center[0] - radius).floor() as i32,
            (center[1] - radius).floor() as i32,
            (center[0] + radius).ceil() as i32 + 1,
            (center[1] + radius).ceil() as i32 + 1,
        )
    }
}

impl DocumentDesc {
    /// Height range height_max - height_min.
    /// The document a height file opens as: r32f, default page size, range 0..1.
    pub fn for_heights(width: u32, height: u32) -> Self {
        Self {
            width,
            height,
            format: HeightFormat::R32f,
            page_size: DEFAULT_PAGE_SIZE,
            height_min: 0.0,
            height_max: 1.0,
            units: Units::default(),
        }
    }

    /// Metres per texel (1 where not known).
    pub fn texel_size(&self) -> f64 {
        self.units.texel_size.unwrap_or(1.0)
    }

    /// Metres per height unit (where not known: a quarter of the larger side's metres).
    pub fn height_unit(&self) -> f64 {
        self.units.height_unit.unwrap_or_else(|| {
            f64::from(default_vertical_scale(self.width, self.height)) * self.texel_size()
        })
    }

    /// Height `h` in metres.
    pub fn metres(&self, h: f32) -> f64 {
        self.units.height_origin.unwrap_or(0.0) + f64::from(h) * self.height_unit()
    }

    /// True scale: texels per height unit, the vertical scale the renderer draws at without
    /// exaggeration and erosion's height scale. Exactly [`default_vertical_scale`] where the
    /// height unit is not known.
    pub fn vertical_scale(&self) -> f32 {
        match self.units.height_unit {
            None => default_vertical_scale(self.width, self.height),
            Some(u) => (u / self.texel_size()) as f32,
        }
    }

    /// "8.19 x 8.19 km, 236 to 1076 m": the extent and heights `lo`..`hi` in metres.
    pub fn extent_line(&self, lo: f32, hi: f32) -> String {
        let km = |texels: u32| f64::from(texels) * self.texel_size() / 1000.0;
        format!(
            "{:.2} x {:.2} km, {:.0} to {:.0} m",
            km(self.width),
            km(self.height),
            self.metres(lo),
            self.metres(hi)
        )
    }

    pub fn height_range(&self) -> f32 {
        self.height_max - self.height_min
    }

    /// The nearest height the document's format can hold (r16: clamped into the range and
    /// rounded to one of 65536 levels), computed as `quantizeHeight` in height_format.glsl.
    pub fn quantize(&self, h: f32) -> f32 {
        match self.format {
            HeightFormat::R32f => h,
            HeightFormat::R16 => {
                self.height_min + (f32::from(self.encode_r16(h)) / 65535.0) * self.height_range()
            }
        }
    }

    /// The r16 level of height `h` (clamped into the range).
    pub fn encode_r16(&self, h: f32) -> u16 {
        (((h - self.height_min) * (1.0 / self.height_range())).clamp(0.0, 1.0) * 65535.0 + 0.5)
            .floor() as u16
    }

    /// The height of r16 level `v`.
    pub fn decode_r16(&self, v: u16) -> f32 {
        self.height_min + (f32::from(v) * (1.0 / 65535.0)) * self.height_range()
    }

    /// Bytes of one stored height.
    pub fn texel_bytes(&self) -> u64 {
        match self.format {
            HeightFormat::R32f => 4,
            HeightFormat::R16 => 2,
        }
    }

    /// Checks the description; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        if self.width == 0 || self.height == 0 || self.width > MAX_SIDE || self.height > MAX_SIDE {
            return Err(format!(
                "width and height must be between 1 and {MAX_SIDE}, got {}x{}",
                self.width, self.height
            ));
        }
        if !PAGE_SIZES.contains(&self.page_size) || !self.page_size.is_power_of_two() {
            return Err(format!(
                "page_size must be a power of two between {} and {}, got {}",
                PAGE_SIZES.start(),
                PAGE_SIZES.end(),
                self.page_size
            ));
        }
        if !self.height_min.is_finite()
            || !self.height_max.is_finite()
            || self.height_min >= self.height_max
        {
            return Err(format!(
                "height_min must be below height_max (both finite), got {} and {}",
                self.height_min, self.height_max
            ));
        }
        self.units.validate()
    }

    pub fn pages_x(&self) -> u32 {
        self.width.div_ceil(self.page_size)
    }

    pub fn pages_y(&self) -> u32 {
        self.height.div_ceil(self.page_size)
    }

    /// Every page of the grid, row by row.
    pub fn page_ids(&self) -> impl Iterator<Item = PageId> {
        let pages_x = self.pages_x();
        (0..self.pages_y()).flat_map(move |y| (0..pages_x).map(move |x| PageId { x, y }))
    }

    /// The page (dx, dy) pages from `id`, if the grid has it.
    pub fn neighbour(&self, id: PageId, dx: i64, dy: i64) -> Option<PageId> {
        let (x, y) = (i64::from(id.x) + dx, i64::from(id.y) + dy);
        let inside = (0..i64::from(self.pages_x())).contains(&x)
            && (0..i64::from(self.pages_y())).contains(&y);
        inside.then_some(PageId {
            x: x as u32,
            y: y as u32,
        })
    }

    pub fn bounds(&self) -> Rect {
        Rect::new(0, 0, self.width as i32, self.height as i32)
    }

    /// The page's texels in document coordinates.
    pub fn page_rect(&self, id: PageId) -> Rect {
        let ps = self.page_size as i32;
        let (x0, y0) = (id.x as i32 * ps, id.y as i32 * ps);
        Rect::new(
            x0,
            y0,
            (x0 + ps).min(self.width as i32),
            (y0 + ps).min(self.height as i32),
        )
    }

    /// The heights of page `id` cut out of a dense row-major grid of the whole document.
    pub fn page_from_dense(&self, heights: &[f32], id: PageId) -> Vec<f32> {
        let r = self.page_rect(id);
        let mut page = Vec::with_capacity((r.width() * r.height()) as usize);
        for y in r.y0..r.y1 {
            let row = y as usize * self.width as usize;
            page.extend_from_slice(&heights[row + r.x0 as usize..row + r.x1 as usize]);
        }
        page
    }

    /// Writes page `id`'s heights (row-major, page extent) into a dense grid of the document.
    pub fn page_into_dense(&self, page: &[f32], id: PageId, out: &mut [f32]) {
        let r = self.page_rect(id);
        let w = r.width() as usize;
        for (row, src) in page.chunks(w).enumerate() {
            let start = (r.y0 as usize + row) * self.width as usize + r.x0 as usize;
            out[start..start + w].copy_from_slice(src);
        }
    }

    /// Texel (x, y) clamped into the document.
    pub fn clamp_texel(&self, x: i32, y: i32) -> (i32, i32) {
        (
            x.clamp(0, self.width as i32 - 1),
            y.clamp(0, self.height as i32 - 1),
        )
    }

    /// Page `id` and its neighbours (up to 3x3) that lie in the document.
    pub fn neighbourhood(&self, id: PageId) -> Vec<PageId> {
        let mut out = Vec::with_capacity(9);
        for dy in -1i64..=1 {
            for dx in -1i64..=1 {
                let (x, y) = (id.x as i64 + dx, id.y as i64 + dy);
                if x >= 0 && y >= 0 && x < self.pages_x() as i64 && y < self.pages_y() as i64 {
                    out.push(PageId {
                        x: x as u32,
                        y: y as u32,
                    });
                }
            }
        }
        out
    }

    /// Pages that `rect` (document coordinates) touches, row by row.
    pub fn pages_in(&self, rect: &Rect) -> Vec<PageId> {
        let r = rect.intersect(&self.bounds());
        if r.is_empty() {
            return Vec::new();
        }
        let ps = self.page_size as i32;
        let mut out = Vec::new();
        for y in (r.y0 / ps)..=((r.y1 - 1) / ps) {
            for x in (r.x0 / ps)..=((r.x1 - 1) / ps) {
                out.push(PageId {
                    x: x as u32,
                    y: y as u32,
                });
            }
        }
        out
    }
}

/// The default vertical scale of a `width` x `height` document: world (texel) units per height
/// unit, a quarter of its larger side. The renderer draws with it and erosion takes it as its
/// height scale.
pub fn default_vertical_scale(width: u32, height: u32) -> f32 {
    0.25 * width.max(height) as f32
}

/// Heights as the page images store them, tightly packed.
pub fn encode(desc: &DocumentDesc, heights: &[f32]) -> Vec<u8> {
    match desc.format {
        HeightFormat::R32f => heights.iter().flat_map(|h| h.to_le_bytes()).collect(),
        HeightFormat::R16 => heights
            .iter()
            .flat_map(|&h| desc.encode_r16(h).to_le_bytes())
            .collect(),
    }
}

/// Heights from tightly packed page texels.
pub fn decode(desc: &DocumentDesc, bytes: &[u8]) -> Vec<f32> {
    match desc.format {
        HeightFormat::R32f => bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        HeightFormat::R16 => bytes
            .chunks_exact(2)
            .map(|c| desc.decode_r16(u16::from_le_bytes([c[0], c[1]])))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc(w: u32, h: u32, ps: u32) -> DocumentDesc {
        DocumentDesc {
            width: w,
            height: h,
            format: HeightFormat::R32f,
            page_size: ps,
            height_min: 0.0,
            height_max: 1.0,
            units: Default::default(),
        }
    }

    #[test]
    fn page_sizes_are_powers_of_two_in_range() {
        // Coarse blocks (64²) and stored chunks of the coarse level tile pages exactly.
        for ps in [128, 256, 2048] {
            assert!(desc(1000, 300, ps).validate().is_ok(), "{ps}");
        }
        for ps in [64, 200, 384, 4096] {
            let e = desc(1000, 300, ps).validate().unwrap_err();
            assert!(e.contains("power of two"), "{ps}: {e}");
        }
    }

    #[test]
    fn pages_cover_odd_sizes_exactly() {
        let d = desc(1000, 300, 128);
        assert_eq!((d.pages_x(), d.pages_y()), (8, 3));
        assert_eq!(
            d.page_rect(PageId { x: 7, y: 2 }),
            Rect::new(896, 256, 1000, 300)
        );
        let total: i64 = (0..3)
            .flat_map(|y| (0..8).map(move |x| PageId { x, y }))
            .map(|id| i64::from(d.page_rect(id).width()) * i64::from(d.page_rect(id).height()))
            .sum();
        assert_eq!(total, 1000 * 300);
    }

    #[test]
    fn pages_in_a_rect_crossing_a_corner() {
        let d = desc(1024, 1024, 128);
        let ids = d.pages_in(&Rect::new(120, 250, 140, 260));
        assert_eq!(
            ids,
            [
                PageId { x: 0, y: 1 },
                PageId { x: 1, y: 1 },
                PageId { x: 0, y: 2 },
                PageId { x: 1, y: 2 }
            ]
        );
        assert!(d.pages_in(&Rect::new(-50, -50, -1, -1)).is_empty());
    }

    #[test]
    fn validation_names_the_field() {
        assert!(desc(0, 5, 512).validate().unwrap_err().contains("width"));
        assert!(desc(5, 5, 100)
            .validate()
            .unwrap_err()
            .contains("page_size"));
        let mut d = desc(5, 5, 512);
        d.height_min = 2.0;
        assert!(d.validate().unwrap_err().contains("height_min"));
    }

    /// The apron a mesh or a map reads: a texel around the region, cut at the document's edges, and the
    /// region's place within it.
    #[test]
    fn the_apron_is_a_texel_around_the_region_inside_the_document() {
        let r = |x, y, width, height| Region {
            x,
            y,
            width,
            height,
        };
        assert_eq!(
            r(10, 20, 30, 40).apron([100, 100]),
            (r(9, 19, 32, 42), r(1, 1, 30, 40))
        );
        assert_eq!(
            r(0, 0, 100, 50).apron([100, 60]),
            (r(0, 0, 100, 51), r(0, 0, 100, 50))
        );
    }
}
