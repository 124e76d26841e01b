//! The LOD quadtree over the tile grid: bounds of every node and the selection of the nodes a
//! frame draws. CPU only (no GPU, no pages): the renderer feeds it tile bounds and tells it which
//! regions have their pages on the GPU.
//!
//! A node of level `j` covers 2^j x 2^j tiles (64·2^j texels a side) and is drawn as the same
//! 65x65 vertex grid at spacing 2^j texels, so a far region is one node however large it is.
//! Nodes of levels 0..=[`PAGE_LEVEL`] sample the pages' texels; coarser ones sample the field's
//! coarse level (spacing 64 and up: the first height of each 64² block, which *is* the page
//! texel there, so the two meet exactly).
//!
//! **Bounds.** Per node: lowest and highest height and its error, the largest vertical distance
//! between the heights and the node's mesh. Up to level 6 that is the largest error of its tiles'
//! own level-j meshes ([`TileBounds`], exact); above, where a mesh cell spans 2^(j-6) tiles, the
//! largest height range of one cell (a bound: the mesh and the heights both lie inside it).
//! Errors are made monotone up the tree.
//!
//! **Selection** visits only nodes it refines (plus their children), so its cost follows the
//! screen, not the world. A node is split when it is visible and its projected error exceeds the
//! bound, and when its children can be drawn (page nodes need their pages on the GPU; otherwise
//! the node stays and its pages are requested). The result is a *restricted* quadtree: leaves
//! that share an edge differ by at most one level, so the GeoMipMapping stitched index lists
//! close every edge (a node whose neighbour is coarser snaps its odd edge vertices onto the
//! neighbour's). Restriction is made in two passes: splits that a wanted split needs next to it
//! are added (their neighbours' parents, going up), then a top-down pass keeps a split only where
//! every same-level neighbour exists, so nothing can break it.

use super::lod::LEVELS;
use super::lod::{box_visible, error_factor, spacing_factor, LodView, TileBounds, TileGrid};
use super::lod::{EAST, NORTH, SOUTH, WEST};
use crate::render::shared::TILE_QUADS;
use ahash::{AHashMap, AHashSet};
use glam::{Vec3, Vec4};

/// Finest level sampled from the coarse level: spacing 64 (coarser levels too).
pub const COARSE_LEVEL: u8 = 6;
/// Coarsest level sampled from the pages (spacing 32).
pub const PAGE_LEVEL: u8 = COARSE_LEVEL - 1;

/// Bounds of one level of nodes.
#[derive(Clone, Debug, Default)]
struct Level {
    w: u32,
    h: u32,
    min: Vec<f32>,
    max: Vec<f32>,
    /// The node's error (monotone up the tree).
    err: Vec<f32>,
    /// Levels 0..=6: per mesh level l, the largest error of its tiles' level-l meshes.
    tile_err: Vec<[f32; LEVELS]>,
}

/// Bounds of every node of the quadtree over a tile grid.
#[derive(Clone, Debug)]
pub struct NodeBounds {
    grid: TileGrid,
    tiles: Vec<TileBounds>,
    levels: Vec<Level>,
}

impl NodeBounds {
    /// Bounds of a grid whose tiles are all flat at height 0.
    pub fn new(grid: TileGrid) -> Self {
        let top = top_level(&grid);
        let levels = (0..=top)
            .map(|j| {
                let (w, h) = dims(&grid, j);
                let n = (w * h) as usize;
                Level {
                    w,
                    h,
                    min: vec![0.0; n],
                    max: vec![0.0; n],
                    err: vec![0.0; n],
                    tile_err: if j <= COARSE_LEVEL {
                        vec![[0.0; LEVELS]; n]
                    } else {
                        Vec::new()
                    },
                }
            })
            .collect();
        Self {
            grid,
            tiles: vec![TileBounds::default(); grid.count()],
            levels,
        }
    }

    pub fn grid(&self) -> &TileGrid {
        &self.grid
    }

    /// Level of the root (one node over the whole grid).
    pub fn top(&self) -> u8 {
        (self.levels.len() - 1) as u8
    }

    /// Nodes per side at `level`.
    pub fn dims(&self, level: u8) -> (u32, u32) {
        let l = &self.levels[level as usize];
        (l.w, l.h)
    }

    /// Every tile's bounds, row-major.
    pub fn tiles(&self) -> &[TileBounds] {
        &self.tiles
    }

    /// Sets tile `i`'s bounds; call [`Self::update`] over the tiles set before reading nodes.
    pub fn set_tile(&mut self, i: usize, b: TileBounds) {
        self.tiles[i] = b;
        let l0 = &mut self.levels[0];
        l0.min[i] = b.min;
        l0.max[i] = b.max;
        let m = b.monotone_errors();
        l0.tile_err[i] = std::array::from_fn(|l| if l == 0 { 0.0 } else { m[l - 1] });
        l0.err[i] = 0.0;
    }

    /// Lowest and highest height and the error of node (level, x, y).
    pub fn node(&self, level: u8, x: u32, y: u32) -> (f32, f32, f32) {
        let l = &self.levels[level as usize];
        let i = (y * l.w + x) as usize;
        (l.min[i], l.max[i], l.err[i])
    }

    /// Lowest and highest height of the whole grid.
    pub fn range(&self) -> (f32, f32) {
        let (lo, hi, _) = self.node(self.top(), 0, 0);
        (lo, hi)
    }

    /// Recomputes every node above the tiles [x0, x1) x [y0, y1).
    pub fn update(&mut self, [x0, y0, x1, y1]: [u32; 4]) {
        if x0 >= x1 || y0 >= y1 {
            return;
        }
        for j in 1..self.levels.len() {
            let (lo, hi) = self.levels.split_at_mut(j);
            let (below, this) = (&lo[j - 1], &mut hi[0]);
            let (nx1, ny1) = (((x1 - 1) >> j) + 1, ((y1 - 1) >> j) + 1);
            for ny in y0 >> j..ny1.min(this.h) {
                for nx in x0 >> j..nx1.min(this.w) {
                    let i = (ny * this.w + nx) as usize;
                    let (mut mn, mut mx, mut child_err) =
                        (f32::INFINITY, f32::NEG_INFINITY, 0.0f32);
                    let mut te = [0.0f32; LEVELS];
                    for (cx, cy) in children(nx, ny) {
                        if cx >= below.w || cy >= below.h {
                            continue;
                        }
                        let c = (cy * below.w + cx) as usize;
                        mn = mn.min(below.min[c]);
                        mx = mx.max(below.max[c]);
                        child_err = child_err.max(below.err[c]);
                        if !this.tile_err.is_empty() {
                            for (t, b) in te.iter_mut().zip(&below.tile_err[c]) {
                                *t = t.max(*b);
                            }
                        }
                    }
                    this.min[i] = mn;
                    this.max[i] = mx;
                    let own = if j <= COARSE_LEVEL as usize {
                        this.tile_err[i] = te;
                        te[j]
                    } else {
                        0.0
                    };
                    this.err[i] = own.max(child_err);
                }
            }
            if j > COARSE_LEVEL as usize {
                // Cells of spacing 2^j are the nodes of level j - 6: the largest range of one.
                let cells = j - COARSE_LEVEL as usize;
                let (lo, hi) = self.levels.split_at_mut(j);
                let (cell, this) = (&lo[cells], &mut hi[0]);
                let span = 1u32 << COARSE_LEVEL;
                for ny in y0 >> j..ny1.min(this.h) {
                    for nx in x0 >> j..nx1.min(this.w) {
                        let mut r = 0.0f32;
                        for cy in ny * span..((ny + 1) * span).min(cell.h) {
                            for cx in nx * span..((nx + 1) * span).min(cell.w) {
                                let c = (cy * cell.w + cx) as usize;
                                r = r.max(cell.max[c] - cell.min[c]);
                            }
                        }
                        let i = (ny * this.w + nx) as usize;
                        this.err[i] = this.err[i].max(r);
                    }
                }
            }
        }
    }

    /// Recomputes every node.
    pub fn update_all(&mut self) {
        self.update([0, 0, self.grid.tiles_x, self.grid.tiles_y]);
    }

    /// World box of node (level, x, y) at vertical scale `vs`.
    pub fn node_box(&self, level: u8, x: u32, y: u32, vs: f32) -> (Vec3, Vec3) {
        let (mn, mx, _) = self.node(level, x, y);
        let [x0, y0, x1, y1] = node_texels(&self.grid, level, x, y);
        let (a, b) = (mn * vs, mx * vs);
        (
            Vec3::new(x0 as f32, a.min(b), y0 as f32),
            Vec3::new(x1 as f32, a.max(b), y1 as f32),
        )
    }
}

/// Level of the root of `grid`'s quadtree: one node over the grid, and never finer than
/// [`COARSE_LEVEL`], so the root can always be drawn (from the coarse level) whatever pages are
/// on the GPU.
fn top_level(grid: &TileGrid) -> u8 {
    let n = grid.tiles_x.max(grid.tiles_y);
    ((32 - (n - 1).leading_zeros()) as u8).max(COARSE_LEVEL)
}

/// Nodes per side at level `j`.
fn dims(grid: &TileGrid, j: u8) -> (u32, u32) {
    (grid.tiles_x.div_ceil(1 << j), grid.tiles_y.div_ceil(1 << j))
}

fn children(x: u32, y: u32) -> [(u32, u32); 4] {
    [
        (2 * x, 2 * y),
        (2 * x + 1, 2 * y),
        (2 * x, 2 * y + 1),
        (2 * x + 1, 2 * y + 1),
    ]
}

/// The children of node (level, x, y) that lie inside the grid (level ≥ 1).
fn children_in(b: &NodeBounds, level: u8, x: u32, y: u32) -> impl Iterator<Item = (u32, u32)> {
    let (w, h) = b.dims(level - 1);
    children(x, y)
        .into_iter()
        .filter(move |&(cx, cy)| cx < w && cy < h)
}

/// Texel rectangle [x0, x1] x [y0, y1] (inclusive: the last vertex) that node (level, x, y)
/// draws, clamped to the document.
pub fn node_texels(grid: &TileGrid, level: u8, x: u32, y: u32) -> [u32; 4] {
    let side = TILE_QUADS << level;
    let (x0, y0) = (x * side, y * side);
    [
        x0,
        y0,
        (x0 + side).min(grid.width - 1),
        (y0 + side).min(grid.height - 1),
    ]
}

/// What a selection needs of the frame.
#[derive(Clone, Copy, Debug)]
pub struct SelectView {
    pub lod: LodView,
    pub planes: [Vec4; 5],
    /// Error bound, pixels.
    pub tau: f32,
    /// Level of tile (tx, ty) instead of the screen-space choice (tests, debugging): a node is
    /// split while a tile inside wants a finer level (restriction may split more).
    pub force: Option<fn(u32, u32) -> u8>,
    /// The lowest level whose vertex spacing on screen counts as error: 0 where the vertices
    /// carry the shading; [`COARSE_LEVEL`] where page nodes are shaded per pixel from the
    /// heights (then only their positions need the mesh, and coarse nodes' lighting).
    pub spacing_from: u8,
}

/// One node a frame draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Drawn {
    pub level: u8,
    pub x: u32,
    pub y: u32,
    /// Sides whose neighbour is one level coarser ([`NORTH`] ... [`WEST`]).
    pub stitch: u8,
    /// Heights from the coarse level: every node of [`COARSE_LEVEL`] and up, and level-5
    /// stand-ins for pages not on the GPU (their parent's surface, sampled at spacing 32).
    pub coarse: bool,
}

/// The nodes of one frame.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    pub drawn: Vec<Drawn>,
    /// Leaves outside the frustum.
    pub culled: u32,
    /// Nodes whose bounds were looked at.
    pub visited: u32,
    /// Page nodes (level, x, y) that a wanted split could not draw (their pages are not on the
    /// GPU), most wanted first.
    pub requests: Vec<(u8, u32, u32)>,
}

fn key(level: u8, x: u32, y: u32) -> u64 {
    (u64::from(level) << 58) | (u64::from(x) << 29) | u64::from(y)
}

/// Same-level neighbours of (x, y) inside `(w, h)`, with the side they lie on.
fn neighbours(x: u32, y: u32, (w, h): (u32, u32)) -> impl Iterator<Item = (u8, u32, u32)> {
    [
        (NORTH, x as i64, y as i64 - 1),
        (EAST, x as i64 + 1, y as i64),
        (SOUTH, x as i64, y as i64 + 1),
        (WEST, x as i64 - 1, y as i64),
    ]
    .into_iter()
    .filter(move |&(_, nx, ny)| nx >= 0 && ny >= 0 && nx < i64::from(w) && ny < i64::from(h))
    .map(|(s, nx, ny)| (s, nx as u32, ny as u32))
}

/// Selects the nodes to draw. `ready(level, x, y)` tells whether page node (level, x, y) can be
/// drawn (its pages, and the one-texel ring around them, on the GPU); it is asked only for
/// children of nodes the selection would split, and what lies inside a ready node must be ready.
pub fn select(
    b: &NodeBounds,
    view: &SelectView,
    ready: &mut dyn FnMut(u8, u32, u32) -> bool,
) -> Selection {
    let mut s = Selector {
        b,
        view,
        ready,
        ready_cache: AHashMap::new(),
        wanted: AHashSet::new(),
        by_level: vec![Vec::new(); b.top() as usize + 1],
        stand_ins: AHashSet::new(),
    };
    let mut sel = Selection::default();
    sel.requests = s.want_splits(&mut sel.visited);
    s.want_neighbours_parents();
    s.draw(&mut sel);
    sel
}

/// One selection's state across its three passes.
struct Selector<'a> {
    b: &'a NodeBounds,
    view: &'a SelectView,
    ready: &'a mut dyn FnMut(u8, u32, u32) -> bool,
    ready_cache: AHashMap<u64, bool>,
    /// The nodes to split, and the same by level.
    wanted: AHashSet<u64>,
    by_level: Vec<Vec<(u32, u32)>>,
    /// Level-5 children of split coarse nodes whose pages are not ready: drawn from the coarse
    /// level (the parent's own surface), stitched on every side like a coarser node.
    stand_ins: AHashSet<u64>,
}

impl Selector<'_> {
    /// The children of (level, x, y) that cannot be drawn (page nodes whose pages are not all
    /// on the GPU); coarse children always can.
    fn unready_children(&mut self, level: u8, x: u32, y: u32) -> Vec<(u8, u32, u32)> {
        if level > COARSE_LEVEL {
            return Vec::new();
        }
        let (cache, ready) = (&mut self.ready_cache, &mut self.ready);
        children_in(self.b, level, x, y)
            .filter(|&(cx, cy)| {
                !*cache
                    .entry(key(level - 1, cx, cy))
                    .or_insert_with(|| ready(level - 1, cx, cy))
            })
            .map(|(cx, cy)| (level - 1, cx, cy))
            .collect()
    }

    /// Whether a tile inside (level, x, y) is forced to a finer level.
    fn force_wants(&self, level: u8, x: u32, y: u32) -> bool {
        let f = self.view.force.expect("forced");
        let g = self.b.grid();
        let (tx0, ty0) = (x << level, y << level);
        let (tx1, ty1) = (
            ((x + 1) << level).min(g.tiles_x),
            ((y + 1) << level).min(g.tiles_y),
        );
        (ty0..ty1).any(|ty| (tx0..tx1).any(|tx| f(tx, ty) < level))
    }

    /// Whether node (level, x, y)'s box is in the frustum.
    fn visible(&self, level: u8, x: u32, y: u32) -> bool {
        let (lo, hi) = self.b.node_box(level, x, y, self.view.lod.vertical_scale);
        box_visible(&self.view.planes, lo, hi)
    }

    /// Marks (level, x, y) split, its `missing` children drawn as stand-ins.
    fn want(&mut self, level: u8, x: u32, y: u32, missing: &[(u8, u32, u32)]) {
        for &(_, cx, cy) in missing {
            self.stand_ins.insert(key(level - 1, cx, cy));
        }
        self.wanted.insert(key(level, x, y));
        self.by_level[level as usize].push((x, y));
    }

    /// Pass 1: the wanted splits, visiting only nodes whose parent is split (counted in
    /// `visited`). Returns the page nodes a wanted split could not draw, most wanted first.
    fn want_splits(&mut self, visited: &mut u32) -> Vec<(u8, u32, u32)> {
        let b = self.b;
        let mut requests: Vec<(f32, (u8, u32, u32))> = Vec::new();
        let mut stack = vec![(b.top(), 0u32, 0u32)];
        while let Some((level, x, y)) = stack.pop() {
            *visited += 1;
            if level == 0 || !self.visible(level, x, y) {
                continue;
            }
            let (lo, hi) = b.node_box(level, x, y, self.view.lod.vertical_scale);
            let lod = &self.view.lod;
            // Where the surface lies, and how it is shaded: where the normal, curvature and
            // overlay (and a coarse node's lighting) are sampled at the vertices, their spacing
            // on screen counts as error too.
            let spacing = match level >= self.view.spacing_from {
                true => (1u32 << level) as f32 * spacing_factor(lod, lo, hi),
                false => 0.0,
            };
            let projected = (b.node(level, x, y).2 * error_factor(lod, lo, hi)).max(spacing);
            let wants = match self.view.force {
                Some(_) => self.force_wants(level, x, y),
                None => projected > self.view.tau,
            };
            if !wants {
                continue;
            }
            let missing = self.unready_children(level, x, y);
            let inside = children_in(b, level, x, y).count();
            // A coarse node may split with some children unready (they are drawn from the coarse
            // level); a page node only when all are ready.
            let partial = level == COARSE_LEVEL && missing.len() < inside;
            if !missing.is_empty() {
                // Only what would be seen is worth its pages.
                requests.extend(
                    missing
                        .iter()
                        .filter(|&&(l, cx, cy)| self.visible(l, cx, cy))
                        .map(|&m| (projected, m)),
                );
                if !partial {
                    continue;
                }
            }
            self.want(level, x, y, &missing);
            for (cx, cy) in children_in(b, level, x, y) {
                if missing.is_empty() || !self.stand_ins.contains(&key(level - 1, cx, cy)) {
                    stack.push((level - 1, cx, cy));
                }
            }
        }
        requests.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut seen = AHashSet::new();
        requests
            .into_iter()
            .map(|(_, n)| n)
            .filter(|n| seen.insert(*n))
            .collect()
    }

    /// Pass 2: a split needs its same-level neighbours to exist, i.e. their parents split; adds
    /// those parents (where their children can be drawn), going up.
    fn want_neighbours_parents(&mut self) {
        for level in 1..self.b.top() {
            let mut i = 0;
            while i < self.by_level[level as usize].len() {
                let (x, y) = self.by_level[level as usize][i];
                i += 1;
                for (_, nx, ny) in neighbours(x, y, self.b.dims(level)) {
                    let (px, py) = (nx / 2, ny / 2);
                    let p = level + 1;
                    if self.wanted.contains(&key(p, px, py)) {
                        continue;
                    }
                    let missing = self.unready_children(p, px, py);
                    if missing.is_empty() || p == COARSE_LEVEL {
                        self.want(p, px, py, &missing);
                    }
                }
            }
        }
    }

    /// Pass 3: top-down, keeps a split only where its parent is split and every same-level
    /// neighbour exists (and is not a stand-in, which counts as one level coarser); the leaves
    /// are drawn into `sel`.
    fn draw(&self, sel: &mut Selection) {
        let (b, top) = (self.b, self.b.top());
        let stand_ins = &self.stand_ins;
        let mut split: AHashSet<u64> = AHashSet::new();
        let mut existing = vec![(0u32, 0u32)];
        for level in (0..=top).rev() {
            let dims = b.dims(level);
            let mut next = Vec::new();
            for &(x, y) in &existing {
                let is_stand_in = |nx: u32, ny: u32| {
                    !stand_ins.is_empty() && stand_ins.contains(&key(level, nx, ny))
                };
                let exists = |nx: u32, ny: u32| {
                    (level == top || split.contains(&key(level + 1, nx / 2, ny / 2)))
                        && !is_stand_in(nx, ny)
                };
                let stand_in = is_stand_in(x, y);
                let splits = level > 0
                    && !stand_in
                    && self.wanted.contains(&key(level, x, y))
                    && neighbours(x, y, dims).all(|(_, nx, ny)| exists(nx, ny));
                if splits {
                    split.insert(key(level, x, y));
                    next.extend(children_in(b, level, x, y));
                    continue;
                }
                if !self.visible(level, x, y) {
                    sel.culled += 1;
                    continue;
                }
                let stitch = if stand_in {
                    NORTH | EAST | SOUTH | WEST
                } else {
                    neighbours(x, y, dims)
                        .filter(|&(_, nx, ny)| !exists(nx, ny))
                        .fold(0, |s, (side, _, _)| s | side)
                };
                sel.drawn.push(Drawn {
                    level,
                    x,
                    y,
                    stitch,
                    coarse: stand_in || level >= COARSE_LEVEL,
                });
            }
            existing = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::lod::frustum_planes;
    use crate::render::Camera;

    /// Bounds of a `size`² document of rolling hills (every tile has error at every level).
    fn hills(size: u32) -> NodeBounds {
        let grid = TileGrid::new(size, size);
        let mut b = NodeBounds::new(grid);
        for ty in 0..grid.tiles_y {
            for tx in 0..grid.tiles_x {
                let h = ((tx as f32 * 0.37).sin() + (ty as f32 * 0.23).cos()) * 0.05 + 0.5;
                let e = 0.002;
                b.set_tile(
                    grid.index(tx, ty),
                    TileBounds {
                        min: h - 0.02,
                        max: h + 0.02,
                        error: std::array::from_fn(|l| e * (1 << l) as f32),
                    },
                );
            }
        }
        b.update_all();
        b
    }

    /// A 1920x1080 view from `eye` toward `target`, 1024 world units per height unit.
    fn view_of(eye: Vec3, target: Vec3) -> SelectView {
        let cam = Camera::look_at(eye, target);
        let vp = cam.view_proj([1920, 1080]);
        SelectView {
            lod: LodView {
                eye: cam.eye(),
                viewport_height: 1080,
                fov_y: cam.fov_y,
                vertical_scale: 1024.0,
                pixel_error: 2.0,
            },
            planes: frustum_planes(&vp),
            tau: 2.0,
            force: None,
            spacing_from: 0,
        }
    }

    /// Leaves sharing an edge differ by at most one level, and stitch bits say where.
    fn check_restricted(b: &NodeBounds, sel: &Selection) {
        let at: AHashMap<(u8, u32, u32), u8> = sel
            .drawn
            .iter()
            .map(|d| ((d.level, d.x, d.y), d.stitch))
            .collect();
        let effective: AHashMap<(u8, u32, u32), u8> = sel
            .drawn
            .iter()
            .map(|d| {
                (
                    (d.level, d.x, d.y),
                    d.level.max(if d.coarse { COARSE_LEVEL } else { 0 }),
                )
            })
            .collect();
        // The leaf covering tile (tx, ty), if drawn.
        let leaf = |tx: u32, ty: u32| {
            (0..=b.top())
                .find(|&l| at.contains_key(&(l, tx >> l, ty >> l)))
                .map(|l| effective[&(l, tx >> l, ty >> l)])
        };
        for d in &sel.drawn {
            let side = 1u32 << d.level;
            let (tx0, ty0) = (d.x * side, d.y * side);
            let g = b.grid();
            let own = effective[&(d.level, d.x, d.y)];
            for t in 0..side {
                let probes = [
                    (NORTH, tx0 as i64 + t as i64, ty0 as i64 - 1),
                    (SOUTH, tx0 as i64 + t as i64, (ty0 + side) as i64),
                    (WEST, tx0 as i64 - 1, ty0 as i64 + t as i64),
                    (EAST, (tx0 + side) as i64, ty0 as i64 + t as i64),
                ];
                for (s, px, py) in probes {
                    if px < 0 || py < 0 || px >= g.tiles_x as i64 || py >= g.tiles_y as i64 {
                        continue;
                    }
                    if let Some(l) = leaf(px as u32, py as u32) {
                        assert!(l.abs_diff(own) <= 1, "{d:?} next to level {l}");
                        if l > own {
                            assert!(d.stitch & s != 0, "{d:?}: side {s} not stitched");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn node_bounds_cover_their_tiles_and_errors_grow_up_the_tree() {
        let b = hills(4096);
        let (lo, hi) = b.range();
        let t = b.tiles();
        assert_eq!(lo, t.iter().map(|b| b.min).fold(f32::INFINITY, f32::min));
        assert_eq!(
            hi,
            t.iter().map(|b| b.max).fold(f32::NEG_INFINITY, f32::max)
        );
        for level in 1..=b.top() {
            let (w, h) = b.dims(level);
            for y in 0..h {
                for x in 0..w {
                    let (mn, mx, e) = b.node(level, x, y);
                    for (cx, cy) in children(x, y) {
                        let (cw, ch) = b.dims(level - 1);
                        if cx < cw && cy < ch {
                            let (cmn, cmx, ce) = b.node(level - 1, cx, cy);
                            assert!(mn <= cmn && mx >= cmx && e >= ce);
                        }
                    }
                    if level <= COARSE_LEVEL {
                        // Exactly the tiles' worst level error.
                        let tiles = 1u32 << level;
                        let want = (0..tiles)
                            .flat_map(|dy| (0..tiles).map(move |dx| (dx, dy)))
                            .filter(|&(dx, dy)| x * tiles + dx < 64 && y * tiles + dy < 64)
                            .map(|(dx, dy)| {
                                t[((y * tiles + dy) * 64 + x * tiles + dx) as usize]
                                    .level_error(level)
                            })
                            .fold(0.0f32, f32::max);
                        assert_eq!(e, want, "level {level}");
                    }
                }
            }
        }
    }

    #[test]
    fn selection_cost_does_not_grow_with_the_world() {
        // The same camera over a 4096² and a 65536² world: a few hundred metres up, looking
        // across. The larger world adds far terrain, which coarse nodes cover.
        let mut counts = Vec::new();
        for size in [4096u32, 65536] {
            let b = hills(size);
            let eye = Vec3::new(2048.0, 1500.0, 2048.0);
            let view = view_of(eye, Vec3::new(3000.0, 0.0, 3500.0));
            let sel = select(&b, &view, &mut |_, _, _| true);
            check_restricted(&b, &sel);
            assert!(sel.requests.is_empty());
            counts.push((sel.drawn.len(), sel.visited));
        }
        let (small, large) = (counts[0], counts[1]);
        assert!(small.0 > 20, "{small:?}");
        // (321 and 486 nodes drawn when written; 509 and 849 visited.)
        assert!(large.0 <= small.0 * 2, "{small:?} vs {large:?}");
        assert!(large.1 <= small.1 * 2, "{small:?} vs {large:?}");
        // GeoMipMapping drew one tile per 64² texels: a million here.
        assert!(large.0 < 5000);
    }

    #[test]
    fn page_nodes_shaded_per_pixel_split_for_their_positions_only() {
        // Flat ground (no vertical error at any level) seen from near: the vertices' spacing on
        // screen splits nodes down to fine levels while they carry the shading, and not below
        // the coarse level's nodes (page nodes of level 5) where the pixels are shaded from the
        // heights; the coarse nodes still split into page nodes near the eye.
        let grid = TileGrid::new(4096, 4096);
        let mut b = NodeBounds::new(grid);
        for i in 0..grid.count() {
            b.set_tile(
                i,
                TileBounds {
                    min: 0.5,
                    max: 0.5,
                    error: [0.0; LEVELS - 1],
                },
            );
        }
        b.update_all();
        let view = view_of(
            Vec3::new(2048.0, 600.0, 2048.0),
            Vec3::new(2400.0, 512.0, 2400.0),
        );
        let finest = |sel: &Selection| sel.drawn.iter().map(|d| d.level).min().unwrap();
        let per_vertex = select(&b, &view, &mut |_, _, _| true);
        let per_pixel = select(
            &b,
            &SelectView {
                spacing_from: COARSE_LEVEL,
                ..view
            },
            &mut |_, _, _| true,
        );
        check_restricted(&b, &per_pixel);
        assert!(
            finest(&per_vertex) < PAGE_LEVEL - 1,
            "{:?}",
            per_vertex.drawn
        );
        assert_eq!(finest(&per_pixel), PAGE_LEVEL);
        assert!(per_pixel.drawn.iter().any(|d| !d.coarse));
        assert!(per_pixel.drawn.len() < per_vertex.drawn.len());
    }

    #[test]
    fn nodes_without_pages_stay_coarse_and_are_requested() {
        let size = 8192;
        let b = hills(size);
        let view = view_of(
            Vec3::new(1000.0, 400.0, 1000.0),
            Vec3::new(3000.0, 0.0, 3000.0),
        );
        let all = select(&b, &view, &mut |_, _, _| true);
        assert!(all.drawn.iter().any(|d| d.level < COARSE_LEVEL));
        let none = select(&b, &view, &mut |_, _, _| false);
        assert!(none.drawn.iter().all(|d| d.coarse));
        assert!(!none.requests.is_empty());
        check_restricted(&b, &none);
        // Only some regions ready: page nodes only inside them, still restricted.
        // Readiness decided per level-5 region (what is inside a ready node is ready).
        let region = |l: u8, x: u32, y: u32| {
            let s = PAGE_LEVEL - l;
            ((x >> s) + (y >> s)) % 3 != 0
        };
        let some = select(&b, &view, &mut |l, x, y| region(l, x, y));
        for d in some.drawn.iter().filter(|d| !d.coarse) {
            assert!(region(d.level, d.x, d.y), "{d:?}");
        }
        assert!(
            some.drawn.iter().any(|d| d.coarse && d.level == PAGE_LEVEL),
            "stand-ins"
        );
        assert!(some.requests.iter().all(|&(l, x, y)| !region(l, x, y)));
        check_restricted(&b, &some);
    }

    #[test]
    fn forced_levels_mix_node_sizes_and_stay_restricted() {
        let b = hills(1024);
        let view = view_of(
            Vec3::new(512.0, 3000.0, 600.0),
            Vec3::new(512.0, 0.0, 512.0),
        );
        let patterns: [fn(u32, u32) -> u8; 3] = [
            |x, y| ((x / 4 + y / 4) % 2 * 3) as u8,
            |x, _| (x / 2) as u8,
            |x, y| ((x / 2 * 3 + y / 4 * 5) % 5) as u8,
        ];
        for f in patterns {
            let sel = select(
                &b,
                &SelectView {
                    force: Some(f),
                    ..view
                },
                &mut |_, _, _| true,
            );
            check_restricted(&b, &sel);
            let levels: AHashSet<u8> = sel.drawn.iter().map(|d| d.level).collect();
            assert!(levels.len() >= 2, "{levels:?}");
            // Every tile is covered by exactly one drawn node (nothing culled in this view).
            let mut cover = vec![0u32; b.grid().count()];
            for d in &sel.drawn {
                let side = 1u32 << d.level;
                for ty in d.y * side..((d.y + 1) * side).min(16) {
                    for tx in d.x * side..((d.x + 1) * side).min(16) {
                        cover[(ty * 16 + tx) as usize] += 1;
                    }
                }
            }
            assert!(cover.iter().all(|&c| c == 1), "{cover:?}");
        }
    }
}
