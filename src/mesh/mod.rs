//! A region of heights as a triangle mesh for other tools (Blender, game prototypes;
//! docs/engines.md, "A mesh"), written as glTF 2.0 binary by [`gltf`].
//!
//! **Simplification** keeps the renderer's error metric — the largest vertical distance
//! between the mesh and the heights, in metres — at texel granularity: a right-triangulated
//! irregular network (RTIN; Evans, Kirkpatrick & Townsend, *Right-triangulated irregular
//! networks*, Algorithmica 2001). The region lies in a square of 2^k + 1 texels a side, cut into
//! two right triangles, each bisected from its right angle to its hypotenuse's midpoint down to
//! triangles with legs of one texel. Every triangle's error is measured exactly, at every texel
//! it covers; one reaching past the region counts as infinitely wrong where it covers part of
//! the region, so the mesh ends exactly at the region's edge. Each hypotenuse midpoint keeps the
//! largest error of the triangles on both sides of it and of everything below them (carried up
//! level by level, so both sides of every child's long side count), and a triangle is split
//! while its midpoint's error exceeds the bound. Both triangles of a hypotenuse then split
//! together, and a triangle splits whenever anything on its sides does: the mesh has no cracks
//! and no T-junctions, and it lies within the bound at every texel.
//!
//! **Vertices** are texels. Positions in metres, glTF's axes: x east along the texel columns,
//! y up (the elevation, the document's height origin included), z south along the rows; texel
//! (0, 0) of the *document* at x = z = 0, so meshes of neighbouring regions meet. Normals are the
//! heightfield's at the vertex (central differences over the whole document, as the renderer
//! shades), texture coordinates run 0..1 over the region (u along x, v along z: an image of the
//! region maps onto it as it is).

pub mod gltf;

use crate::pages::geometry::{check_region, Region};
use crate::pages::DocumentDesc;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering};

/// A triangle mesh in metres (see the module's axes).
#[derive(Clone, Debug, Default)]
pub struct Mesh {
    pub positions: Vec<[f32; 3]>,
    /// Unit length.
    pub normals: Vec<[f32; 3]>,
    pub uvs: Vec<[f32; 2]>,
    /// Counter-clockwise seen from above (+y), glTF's front faces.
    pub indices: Vec<u32>,
    /// The largest vertical distance between the mesh and the heights at any texel of the
    /// region, metres.
    pub max_error_m: f64,
}

impl Mesh {
    pub fn triangles(&self) -> usize {
        self.indices.len() / 3
    }
}

/// Why a mesh is not made.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MeshError {
    #[error("the mesh's error must be a finite number of metres at least 0, not {0}")]
    Bound(f64),
    #[error("region: {0}")]
    Region(String),
    #[error("a mesh needs a region of at least 2x2 texels, not {0}x{1}")]
    TooSmall(u32, u32),
    #[error(
        "a {0}x{1} region is too long and thin for one mesh (its square of errors would take \
         {2} GiB): export it as squarer regions"
    )]
    Thin(u32, u32, u64),
}

/// The largest square of errors (texels) a mesh is made over beyond 16 times its region's.
const SQUARE_ALLOWANCE: u64 = 1 << 24;

/// Heights of a `width`-wide row-major grid: the document's, or a rectangle of it.
pub struct Grid<'a> {
    pub values: &'a [f32],
    pub width: u32,
    pub height: u32,
    /// The document texel of the grid's first value.
    pub origin: [u32; 2],
}

/// The mesh of `region` (texels of `grid`) in the heights of document `desc`, within `bound_m`
/// metres of the heights at every texel (0: every texel a vertex). The texels around the
/// region in `grid` give the normals at its edges.
pub fn build(
    grid: Grid,
    region: Region,
    desc: &DocumentDesc,
    bound_m: f64,
) -> Result<Mesh, MeshError> {
    if !bound_m.is_finite() || bound_m < 0.0 {
        return Err(MeshError::Bound(bound_m));
    }
    check_region(grid.width, grid.height, region).map_err(MeshError::Region)?;
    if region.width < 2 || region.height < 2 {
        return Err(MeshError::TooSmall(region.width, region.height));
    }
    let side = u64::from((region.width.max(region.height) - 1).next_power_of_two()) + 1;
    let texels = u64::from(region.width) * u64::from(region.height);
    if side * side > (16 * texels).max(SQUARE_ALLOWANCE) {
        let gib = (side * side * 4) >> 30;
        return Err(MeshError::Thin(region.width, region.height, gib.max(1)));
    }
    let heights = region.cut(grid.values, grid.width);
    let rtin = Rtin::new(&heights, region.width, region.height);
    let (triangles, vertices) = rtin.extract(bound_m / desc.height_unit());
    let error = max_error(
        &heights,
        [region.width, region.height],
        &triangles,
        &vertices,
    );
    let mut mesh = assemble(&grid, region, desc, &triangles, &vertices, error);
    // Within the bound in height units; the product in metres must not round past it.
    mesh.max_error_m = mesh.max_error_m.min(bound_m);
    Ok(mesh)
}

/// A texel (x east, y south) of the square the network covers.
type Point = [i64; 2];

/// One triangle of the network: hypotenuse a–b, right angle at c.
#[derive(Clone, Copy)]
struct Tri {
    a: Point,
    b: Point,
    c: Point,
}

impl Tri {
    /// The hypotenuse's midpoint, when the triangle can be split (its legs are longer than one
    /// texel).
    fn midpoint(&self) -> Option<Point> {
        let s = [self.a[0] + self.b[0], self.a[1] + self.b[1]];
        (s[0] % 2 == 0 && s[1] % 2 == 0).then(|| [s[0] / 2, s[1] / 2])
    }

    /// Its two halves, each with its right angle at `m`.
    fn children(&self, m: Point) -> [Tri; 2] {
        [
            Tri {
                a: self.c,
                b: self.a,
                c: m,
            },
            Tri {
                a: self.b,
                b: self.c,
                c: m,
            },
        ]
    }

    fn corners(&self) -> [Point; 3] {
        [self.a, self.b, self.c]
    }

    /// The longer side of its bounding box, texels.
    fn span(&self) -> i64 {
        (self.a[0] - self.b[0])
            .abs()
            .max((self.a[1] - self.b[1]).abs())
    }
}

/// The errors of a right-triangulated irregular network over a region's heights.
struct Rtin<'a> {
    heights: &'a [f32],
    width: u32,
    height: u32,
    /// The network's square: 2^k + 1 texels a side, the region at its top-left.
    side: i64,
    /// Per texel of the square, as a hypotenuse midpoint: the largest error (height units, as
    /// f32 bits; every value is ≥ 0, so the bits order as the numbers) of the triangles on both
    /// sides of that hypotenuse and of all below them.
    errors: Vec<AtomicU32>,
}

impl<'a> Rtin<'a> {
    fn new(heights: &'a [f32], width: u32, height: u32) -> Self {
        let side = i64::from((width.max(height) - 1).next_power_of_two()) + 1;
        let r = Self {
            heights,
            width,
            height,
            side,
            errors: (0..side * side).map(|_| AtomicU32::new(0)).collect(),
        };
        let [t0, t1] = r.roots();
        rayon::join(|| r.measure(t0), || r.measure(t1));
        // Then level by level from the finest: a midpoint takes the largest error stored at
        // its triangles' children's midpoints, which hold both sides of each child's long
        // side by now. (Within one subtree alone, a neighbour's split across a child's long
        // side would be missed, leaving a T-junction on the parent's edge.)
        for depth in (0..r.depth()).rev() {
            rayon::join(|| r.propagate(t0, depth), || r.propagate(t1, depth));
        }
        r
    }

    /// The square's two halves (one hypotenuse: the diagonal from the top-left).
    fn roots(&self) -> [Tri; 2] {
        let n = self.side - 1;
        [
            Tri {
                a: [0, 0],
                b: [n, n],
                c: [n, 0],
            },
            Tri {
                a: [n, n],
                b: [0, 0],
                c: [0, n],
            },
        ]
    }

    fn inside(&self, p: Point) -> bool {
        p[0] < i64::from(self.width) && p[1] < i64::from(self.height)
    }

    fn error_at(&self, m: Point) -> f32 {
        f32::from_bits(self.slot(m).load(Ordering::Relaxed))
    }

    /// Levels of triangles that can be split below the roots (each halves the last).
    fn depth(&self) -> u32 {
        2 * (self.side - 1).trailing_zeros()
    }

    fn is_past(&self, t: &Tri) -> bool {
        let corner = |k: usize| t.corners().iter().map(|p| p[k]).min().unwrap();
        corner(0) >= i64::from(self.width) || corner(1) >= i64::from(self.height)
    }

    fn slot(&self, m: Point) -> &AtomicU32 {
        &self.errors[(m[1] * self.side + m[0]) as usize]
    }

    /// Stores the own error of `t` and of everything below it at their midpoints.
    fn measure(&self, t: Tri) {
        let Some(m) = t.midpoint() else {
            return;
        };
        if self.is_past(&t) {
            // Wholly past the region: never drawn, never wrong.
            return;
        }
        let [c0, c1] = t.children(m);
        match t.span() > 64 {
            true => rayon::join(|| self.measure(c0), || self.measure(c1)),
            false => (self.measure(c0), self.measure(c1)),
        };
        self.slot(m)
            .fetch_max(self.own_error(&t).to_bits(), Ordering::Relaxed);
    }

    /// For the triangles `depth` levels below `t`: their midpoints take the errors at their
    /// children's midpoints (already final: the levels below were done before).
    fn propagate(&self, t: Tri, depth: u32) {
        let Some(m) = t.midpoint() else {
            return;
        };
        if self.is_past(&t) {
            return;
        }
        let [c0, c1] = t.children(m);
        if depth > 0 {
            match t.span() > 64 {
                true => rayon::join(
                    || self.propagate(c0, depth - 1),
                    || self.propagate(c1, depth - 1),
                ),
                false => (self.propagate(c0, depth - 1), self.propagate(c1, depth - 1)),
            };
            return;
        }
        let below = [c0, c1]
            .iter()
            .filter_map(Tri::midpoint)
            .map(|mc| self.error_at(mc))
            .fold(0.0f32, f32::max);
        self.slot(m).fetch_max(below.to_bits(), Ordering::Relaxed);
    }

    /// The largest vertical distance between `t`'s plane and the heights at the texels it
    /// covers (height units, rounded up to an f32); infinite where it reaches past the region
    /// and covers part of it.
    fn own_error(&self, t: &Tri) -> f32 {
        let v = t.corners();
        let size = [self.width, self.height];
        if !v.iter().all(|&p| self.inside(p)) {
            return match covered(v, size).next() {
                Some(_) => f32::INFINITY,
                None => 0.0,
            };
        }
        let worst = plane_error(self.heights, size, v);
        let e = worst as f32;
        match f64::from(e) < worst {
            true => next_up(e),
            false => e,
        }
    }

    /// Triangles (indices into the vertices, counter-clockwise seen from +y) and vertices
    /// (region texels) of the mesh within `bound` height units of the heights.
    fn extract(&self, bound: f64) -> (Vec<[u32; 3]>, Vec<[u32; 2]>) {
        let mut ids = vec![u32::MAX; self.width as usize * self.height as usize];
        let (mut triangles, mut vertices) = (Vec::new(), Vec::new());
        let mut stack: Vec<Tri> = self.roots().to_vec();
        while let Some(t) = stack.pop() {
            match t.midpoint() {
                Some(m) if f64::from(self.error_at(m)) > bound => stack.extend(t.children(m)),
                _ if t.corners().iter().all(|&p| self.inside(p)) => {
                    let mut id = |p: Point| {
                        let i = p[1] as usize * self.width as usize + p[0] as usize;
                        if ids[i] == u32::MAX {
                            ids[i] = vertices.len() as u32;
                            vertices.push([p[0] as u32, p[1] as u32]);
                        }
                        ids[i]
                    };
                    // Counter-clockwise seen from +y with z along the rows is clockwise in
                    // (x east, y south) texels, where `edge` is negative.
                    let (p, q) = match edge(t.a, t.b, t.c) < 0 {
                        true => (t.b, t.c),
                        false => (t.c, t.b),
                    };
                    triangles.push([id(t.a), id(p), id(q)]);
                }
                _ => {}
            }
        }
        (triangles, vertices)
    }
}

/// The next f32 above `e` ≥ 0 (`f32::next_up` is newer than the crate's Rust).
fn next_up(e: f32) -> f32 {
    f32::from_bits(e.to_bits() + 1)
}

/// Twice the signed area of (a, b, p) in texels (positive: p left of a→b, x east, y south).
fn edge(a: Point, b: Point, p: Point) -> i64 {
    (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])
}

/// The texels of a `width` x `height` grid that triangle `v` covers (its sides included), each
/// with its barycentric weights times twice the triangle's signed area.
fn covered(v: [Point; 3], [width, height]: [u32; 2]) -> impl Iterator<Item = (Point, [i64; 3])> {
    let sign = edge(v[0], v[1], v[2]).signum();
    let lo = move |k: usize| v.iter().map(|p| p[k]).min().unwrap().max(0);
    let hi = move |k: usize, n: u32| v.iter().map(|p| p[k]).max().unwrap().min(i64::from(n) - 1);
    (lo(1)..=hi(1, height))
        .flat_map(move |y| (lo(0)..=hi(0, width)).map(move |x| [x, y]))
        .filter_map(move |p| {
            let b = [
                edge(v[1], v[2], p),
                edge(v[2], v[0], p),
                edge(v[0], v[1], p),
            ];
            b.iter().all(|&b| b * sign >= 0).then_some((p, b))
        })
}

/// The largest vertical distance (height units) between the plane of triangle `v` (inside the
/// `size` grid of `heights`, through the heights at its corners) and the heights at the texels
/// it covers, by exact barycentric weights.
fn plane_error(heights: &[f32], size: [u32; 2], v: [Point; 3]) -> f64 {
    let h = |p: Point| f64::from(heights[p[1] as usize * size[0] as usize + p[0] as usize]);
    let zs = v.map(h);
    let area = edge(v[0], v[1], v[2]) as f64;
    covered(v, size)
        .map(|(p, b)| {
            let z = (b[0] as f64 * zs[0] + b[1] as f64 * zs[1] + b[2] as f64 * zs[2]) / area;
            (z - h(p)).abs()
        })
        .fold(0.0, f64::max)
}

/// The largest vertical distance (height units) between the triangles (of vertices in the
/// `size` grid of `heights`) and the heights at every texel they cover.
fn max_error(
    heights: &[f32],
    size: [u32; 2],
    triangles: &[[u32; 3]],
    vertices: &[[u32; 2]],
) -> f64 {
    triangles
        .par_iter()
        .map(|t| {
            plane_error(
                heights,
                size,
                t.map(|i| vertices[i as usize].map(i64::from)),
            )
        })
        .reduce(|| 0.0, f64::max)
}

/// Positions, normals and texture coordinates of the region's vertices.
fn assemble(
    grid: &Grid,
    region: Region,
    desc: &DocumentDesc,
    triangles: &[[u32; 3]],
    vertices: &[[u32; 2]],
    error: f64,
) -> Mesh {
    let tau = desc.texel_size();
    let unit = desc.height_unit();
    let at = |x: u32, y: u32| f64::from(grid.values[y as usize * grid.width as usize + x as usize]);
    let span = |n: u32| f64::from((n - 1).max(1));
    let mut mesh = Mesh {
        indices: triangles.iter().flatten().copied().collect(),
        max_error_m: error * unit,
        ..Mesh::default()
    };
    for &[rx, ry] in vertices {
        let (x, y) = (region.x + rx, region.y + ry);
        let [ox, oy] = grid.origin;
        mesh.positions.push([
            (f64::from(ox + x) * tau) as f32,
            desc.metres(at(x, y) as f32) as f32,
            (f64::from(oy + y) * tau) as f32,
        ]);
        // Central differences over the grid, one-sided at its edges.
        let (xl, xr) = (x.saturating_sub(1), (x + 1).min(grid.width - 1));
        let (yu, yd) = (y.saturating_sub(1), (y + 1).min(grid.height - 1));
        let dx = (at(xr, y) - at(xl, y)) * unit / (f64::from(xr - xl).max(1.0) * tau);
        let dz = (at(x, yd) - at(x, yu)) * unit / (f64::from(yd - yu).max(1.0) * tau);
        let n = glam::DVec3::new(-dx, 1.0, -dz).normalize();
        mesh.normals.push([n.x as f32, n.y as f32, n.z as f32]);
        mesh.uvs.push([
            (f64::from(rx) / span(region.width)) as f32,
            (f64::from(ry) / span(region.height)) as f32,
        ]);
    }
    mesh
}

#[cfg(test)]
mod tests;
