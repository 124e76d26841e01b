//! Following the height field's edits: the coarse level, stale page sets and the tile bounds of
//! changed pages, which the quadtree's node bounds sit on.
//!
//! Tile bounds of pages on the GPU come from `tile_bounds.comp`, recorded into the frame's own
//! submission when a frame is in flight ([`BoundsJob`]s, read back when the frame is retired,
//! a frame or two later; until then the tiles keep their previous bounds), else computed and read
//! back at once (the first frame, single offscreen renders: nothing to overlap with). Tiles
//! estimated from the coarse level follow the same rule: with a frame in flight the frame copies
//! their coarse texels back (`FrameSlot::estimates`), else they are read at once.

use super::blocks::Blocks;
use super::TerrainRenderer;
use crate::gpu::{Access, Buffer, BufferDesc, GpuError, GpuTimer, Recorder, Result};
use crate::pages::coarse::CoarseLevel;
use crate::pages::geometry::{PageId, Rect};
use crate::pages::{Field, PageError, PageStore};
use crate::render::lod::{TileBounds, LEVELS};
use crate::render::quadtree::NodeBounds;
use crate::render::shared::{BoundsPush, TILE_QUADS};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Tile bounds to compute on the GPU: tiles `rect` ([x0, y0, x1, y1), page-local) of `page`.
/// A job's results apply only while it is its page's newest (`seq`).
#[derive(Clone, Copy, Debug)]
pub(super) struct BoundsJob {
    pub page: PageId,
    pub rect: [u32; 4],
    pub seq: u64,
}

/// The union of two tile rectangles.
fn union(a: [u32; 4], b: [u32; 4]) -> [u32; 4] {
    [
        a[0].min(b[0]),
        a[1].min(b[1]),
        a[2].max(b[2]),
        a[3].max(b[3]),
    ]
}

impl TerrainRenderer {
    /// Catches up with `store`'s edits: brings the height field's coarse level up to date (the
    /// frame set points at it), re-points the sets of changed neighbourhoods and recomputes the
    /// tile bounds of changed pages (whole pages) and of the tiles of their west, north and
    /// north-west neighbours that reach into them (an edge column, row or corner), then the node
    /// bounds above them. Where a tile's pages (its own and those it reaches into) are all flat,
    /// its bounds are flat; where they are all on the GPU, `tile_bounds.comp` computes them (see
    /// the module docs); elsewhere a tile keeps its bounds if its page only moved, else takes
    /// them from the coarse level (a bound, until its pages come). The first call covers every
    /// tile. Call after [`Self::begin_frame`].
    pub fn refresh(&mut self, store: &mut PageStore) -> Result<(), PageError> {
        let t0 = std::time::Instant::now();
        let _p = crate::profile::scope("render: refresh");
        {
            let _c = crate::profile::scope("render: refresh: coarse level");
            store.height_mut().refresh_coarse()?;
        }
        let drawn: BTreeSet<PageId> = self.groups.iter().filter_map(|g| g.block).collect();
        for c in self.tint.catch_up(store, self.blocks, &drawn)? {
            // The blocks whose overlay pages hold c: its own, and those west, north and
            // north-west of it whose next row or column it is.
            for (dx, dy) in [(0, 0), (-1, 0), (0, -1), (-1, -1)] {
                let Some(n) = self.blocks.neighbour(c, dx, dy) else {
                    continue;
                };
                if let Some(s) = self.page_sets.get_mut(&Blocks::of(n)) {
                    s.stale = true;
                }
            }
        }
        // The lighting's and rivers' pages the last frame wanted in their atlases come onto
        // the GPU (the atlases copy them once there); their coarse levels come up to date, also
        // for a field the last frame did not shade with (the first frame lit after it appears).
        for shaded in [&self.light, &self.rivers] {
            if let Some(field) = store.field_mut(&shaded.name) {
                if shaded.on {
                    field.ensure_visible(&self.atlas_wanted)?;
                }
                field.refresh_coarse()?;
            }
        }
        let terrain = store.height();
        let coarse = terrain
            .coarse_level()
            .ok_or_else(|| GpuError::usage("a drawable document has a coarse level"))?;
        self.bind_coarse(coarse.image())?;
        let (changed, epoch) = terrain.changes().changed_since(self.seen_epoch);
        let values: BTreeSet<PageId> = terrain
            .changes()
            .values_changed_since(self.seen_epoch)
            .into_iter()
            .collect();
        self.seen_epoch = epoch;
        let first = !self.initialized;
        self.initialized = true;
        let dirty = {
            let _d = crate::profile::scope("render: refresh: dirty tiles");
            self.dirty_tiles(terrain, &changed, first)
        };
        // Where each dirty page's tiles get their bounds: the pages its tiles reach into.
        let blocks = self.blocks;
        let reach = |id: PageId| {
            [(0, 0), (1, 0), (0, 1), (1, 1)]
                .into_iter()
                .filter_map(move |(dx, dy)| blocks.neighbour(id, dx, dy))
        };
        let mut jobs = Vec::new();
        let mut flat = Vec::new();
        let mut estimated = Vec::new();
        for (&id, &r) in &dirty {
            if reach(id).all(|n| terrain.versions().visible(n).is_none()) {
                flat.push((id, r));
            } else if reach(id).all(|n| terrain.drawable(n)) {
                jobs.push((id, r));
            } else if first || reach(id).any(|n| values.contains(&n)) {
                estimated.push((id, r));
            }
        }
        {
            let _s = crate::profile::scope("render: refresh: settle tiles");
            self.settle_tiles(terrain.flat(), coarse, &flat, &estimated)?;
        }
        let r = self.submit_bounds(store, jobs);
        self.stats.refresh_ms = t0.elapsed().as_secs_f64() * 1e3;
        r
    }

    /// Per page, the local tile rectangle [x0, x1) x [y0, y1) whose bounds must be recomputed
    /// after pages `changed` (every tile the `first` time), clipped to tiles that exist; marks
    /// the page sets of changed neighbourhoods stale and forgets whether changed pages can be
    /// drawn.
    fn dirty_tiles(
        &mut self,
        terrain: &Field,
        changed: &[PageId],
        first: bool,
    ) -> BTreeMap<PageId, [u32; 4]> {
        let tpp = self.desc.page_size / TILE_QUADS;
        let mut dirty: BTreeMap<PageId, [u32; 4]> = BTreeMap::new();
        let mut add = |id: PageId, r: [u32; 4]| {
            let e = dirty.entry(id).or_insert(r);
            *e = union(*e, r);
        };
        if first {
            for id in self.blocks.page_ids() {
                add(id, [0, 0, tpp, tpp]);
            }
        }
        let pages_x = self.desc.pages_x();
        for &c in changed {
            if let Some(d) = self.page_drawable.get_mut((c.y * pages_x + c.x) as usize) {
                *d = 0;
            }
            for dy in -1..=1 {
                for dx in -1..=1 {
                    let Some(n) = self.blocks.neighbour(c, dx, dy) else {
                        continue;
                    };
                    // Every block whose set holds c has n (c itself or a neighbour) inside.
                    if let Some(s) = self.page_sets.get_mut(&Blocks::of(n)) {
                        s.stale = true;
                    }
                    // Tiles of pages west/north of c end on c's first column/row.
                    let xs = if dx < 0 { [tpp - 1, tpp] } else { [0, tpp] };
                    let ys = if dy < 0 { [tpp - 1, tpp] } else { [0, tpp] };
                    if dx <= 0 && dy <= 0 {
                        add(n, [xs[0], ys[0], xs[1], ys[1]]);
                    }
                }
            }
        }
        // Pages whose tiles hold coarse estimates are redone once their pages are all back. A
        // page comes back as a change (its image moved onto the GPU, or new values), so only the
        // estimated pages whose tiles reach into a changed one can have become complete: those
        // are checked, not every estimated page (all of a reopened project's at first).
        if !changed.is_empty() {
            let blocks = self.blocks;
            let reaching: BTreeSet<PageId> = changed
                .iter()
                .flat_map(|&c| {
                    [(0, 0), (-1, 0), (0, -1), (-1, -1)]
                        .into_iter()
                        .filter_map(move |(dx, dy)| blocks.neighbour(c, dx, dy))
                })
                .filter(|id| self.estimated.contains(id))
                .collect();
            let back: Vec<PageId> = reaching
                .into_iter()
                .filter(|&id| {
                    [(0, 0), (1, 0), (0, 1), (1, 1)]
                        .into_iter()
                        .filter_map(|(dx, dy)| self.blocks.neighbour(id, dx, dy))
                        .all(|n| terrain.drawable(n))
                })
                .collect();
            for id in back {
                add(id, [0, 0, tpp, tpp]);
            }
        }
        // A page whose GPU bounds are still in flight is redone whole (the new job supersedes).
        for (id, r) in dirty.iter_mut() {
            if let Some((pending, _)) = self.bounds_pending.get(id) {
                *r = union(*r, *pending);
            }
        }
        // Clip to tiles that exist.
        let grid = *self.nodes.grid();
        dirty.retain(|id, r| {
            r[2] = r[2].min(grid.tiles_x.saturating_sub(id.x * tpp));
            r[3] = r[3].min(grid.tiles_y.saturating_sub(id.y * tpp));
            r[0] < r[2] && r[1] < r[3]
        });
        dirty
    }

    /// Sets the bounds of tiles that need no GPU work: `flat` ones (every page they reach is
    /// flat at `level`) and `estimated` ones (taken from the `coarse` level until their pages
    /// come: read back by this frame when frames are in flight, else at once), then the node
    /// bounds above them.
    fn settle_tiles(
        &mut self,
        level: f32,
        coarse: &CoarseLevel,
        flat: &[(PageId, [u32; 4])],
        estimated: &[(PageId, [u32; 4])],
    ) -> Result<(), PageError> {
        let tpp = self.desc.page_size / TILE_QUADS;
        let mut touched = [u32::MAX, u32::MAX, 0, 0];
        self.stats.estimated_pages = estimated.len() as u32;
        for &(id, r) in flat {
            self.bounds_pending.remove(&id);
            self.estimated.remove(&id);
            set_tiles(&mut self.nodes, &mut touched, tpp, id, r, &|_, _| {
                TileBounds {
                    min: level,
                    max: level,
                    error: [0.0; LEVELS - 1],
                }
            });
        }
        if !estimated.is_empty() {
            // Only the coarse texels the estimated tiles lie in are read back.
            let [cw, ch] = crate::pages::coarse::size_of(&self.desc);
            let tiles = estimated
                .iter()
                .fold([u32::MAX, u32::MAX, 0, 0], |t, &(id, r)| {
                    union(t, document_tiles(tpp, id, r))
                });
            let (x1, y1) = ((tiles[2] + 1).min(cw), (tiles[3] + 1).min(ch));
            let rect = Rect::new(tiles[0] as i32, tiles[1] as i32, x1 as i32, y1 as i32);
            if self.frames_in_flight() {
                // Read back by this frame's submission, taken when it is retired (until then
                // the tiles keep their bounds): no wait here for the frames in flight. Jobs a
                // frame begun on this slot left unsubmitted stay, with their texels.
                let left = &self.slots[self.slot];
                let rect = match left.estimate_jobs.is_empty() {
                    true => rect,
                    false => left.estimate_rect.union(&rect),
                };
                self.reserve_estimates(rect)?;
                let mut jobs = std::mem::take(&mut self.slots[self.slot].estimate_jobs);
                for &(page, tiles) in estimated {
                    self.bounds_seq += 1;
                    self.bounds_pending.insert(page, (tiles, self.bounds_seq));
                    self.estimated.insert(page);
                    jobs.push(BoundsJob {
                        page,
                        rect: tiles,
                        seq: self.bounds_seq,
                    });
                }
                let slot = &mut self.slots[self.slot];
                slot.estimate_jobs = jobs;
                slot.estimate_rect = rect;
            } else {
                let texels = coarse.read_rect(rect)?;
                for &(id, r) in estimated {
                    self.bounds_pending.remove(&id);
                    self.estimated.insert(id);
                    set_tiles(&mut self.nodes, &mut touched, tpp, id, r, &|tx, ty| {
                        estimate(&texels, rect, [cw, ch], tx, ty)
                    });
                }
            }
        }
        if touched[0] < touched[2] {
            let _n = crate::profile::scope("render: node bounds");
            self.nodes.update(touched);
        }
        Ok(())
    }

    /// Computes the bounds of the tiles of `jobs` (page, tile rectangle) on the GPU: recorded
    /// into this frame's submission with frames in flight (taken when it is retired), else
    /// submitted and waited for here.
    fn submit_bounds(
        &mut self,
        store: &PageStore,
        jobs: Vec<(PageId, [u32; 4])>,
    ) -> Result<(), PageError> {
        self.stats.bounds_pages = jobs.len() as u32;
        self.stats.bounds_gpu_ms = 0.0;
        if jobs.is_empty() {
            return Ok(());
        }
        let jobs: Vec<BoundsJob> = jobs
            .into_iter()
            .map(|(page, rect)| {
                self.estimated.remove(&page);
                self.bounds_seq += 1;
                self.bounds_pending.insert(page, (rect, self.bounds_seq));
                BoundsJob {
                    page,
                    rect,
                    seq: self.bounds_seq,
                }
            })
            .collect();
        let sets = crate::profile::scope("render: refresh sets");
        let blocks: BTreeSet<PageId> = jobs.iter().map(|j| Blocks::of(j.page)).collect();
        for &b in &blocks {
            self.update_set(store, b)?;
        }
        drop(sets);
        if self.frames_in_flight() {
            // Recorded into this frame's submission, taken when the frame is retired; after
            // any that a frame begun on this slot left unsubmitted.
            let mut all = std::mem::take(&mut self.slots[self.slot].bounds_jobs);
            all.extend(jobs);
            self.reserve_bounds(all.len())?;
            self.slots[self.slot].bounds_jobs = all;
            return Ok(());
        }
        self.reserve_bounds(jobs.len())?;
        let this = &*self;
        let mut rec = Recorder::new(&this.gpu)?;
        let timer = this.slots[this.slot].timer.as_ref();
        if let Some(t) = timer {
            rec.reset_timer(t);
        }
        this.record_bounds(&mut rec, store.height(), &jobs, timer)?;
        rec.submit_and_wait()?;
        if let Some(t) = timer {
            self.stats.bounds_gpu_ms = t.results()?.iter().map(|p| p.gpu_ns).sum::<f64>() * 1e-6;
        }
        self.apply_bounds(self.slot, &jobs)?;
        Ok(())
    }

    /// Records `jobs` into `rec`: `tile_bounds.comp` per job, writing the current slot's bounds
    /// output (job k at range k), timed as "tile bounds", then made readable by the host.
    pub(super) fn record_bounds<'a>(
        &'a self,
        rec: &mut Recorder<'a>,
        terrain: &'a Field,
        jobs: &[BoundsJob],
        timer: Option<&'a GpuTimer>,
    ) -> Result<()> {
        if jobs.is_empty() {
            return Ok(());
        }
        let tpp = self.desc.page_size / TILE_QUADS;
        let slot = &self.slots[self.slot];
        let blocks: BTreeSet<PageId> = jobs.iter().map(|j| Blocks::of(j.page)).collect();
        self.declare_blocks(rec, terrain, blocks, Access::ComputeStorageRead);
        rec.buffer(&slot.bounds, Access::ComputeStorageWrite);
        let query = match timer {
            Some(t) => Some((t, rec.timer_begin(t, "tile bounds")?)),
            None => None,
        };
        let p = &self.pipelines;
        rec.bind_compute(&p.tile_bounds)?;
        for (k, job) in jobs.iter().enumerate() {
            let (id, r) = (job.page, job.rect);
            let block = Blocks::of(id);
            let set = &self.page_sets[&block];
            let page0 = [(id.x * tpp) as i32, (id.y * tpp) as i32];
            let push = BoundsPush {
                block_origin: self.blocks.origin(block),
                present: set.present,
                tiles_per_page: tpp as i32,
                page_size: self.desc.page_size as i32,
                doc: [self.desc.width as i32, self.desc.height as i32],
                flat_height: terrain.flat(),
                height_min: self.desc.height_min,
                height_range: self.desc.height_range(),
                unused: 0,
                first_tile: [page0[0] + r[0] as i32, page0[1] + r[1] as i32],
                page_tile0: page0,
            };
            // The dynamic offset keeps each dispatch inside its job's range of the output.
            let offset = k as u64 * self.bounds_stride;
            rec.bind_sets(
                false,
                &p.bounds,
                0,
                &[set.set, slot.bounds_set],
                &[offset as u32],
            );
            rec.push_constants(&p.bounds, &push);
            rec.dispatch([r[2] - r[0], r[3] - r[1], 1]);
        }
        if let Some((t, q)) = query {
            rec.timer_end(t, q);
        }
        rec.buffer(&slot.bounds, Access::HostRead);
        Ok(())
    }

    /// Records the tile bounds `refresh` left for the current frame (see [`Self::record_bounds`]).
    pub(in crate::render) fn record_frame_bounds<'a>(
        &'a self,
        rec: &mut Recorder<'a>,
        terrain: &'a Field,
        timer: Option<&'a GpuTimer>,
    ) -> Result<()> {
        let slot = &self.slots[self.slot];
        if let (false, Some(buf), Some(coarse)) = (
            slot.estimate_jobs.is_empty(),
            &slot.estimates,
            terrain.coarse_level(),
        ) {
            let r = slot.estimate_rect;
            let size = [r.width() as u32, r.height() as u32];
            rec.copy_image_region_to_buffer(coarse.image(), [r.x0, r.y0], size, buf, 0);
            rec.buffer(buf, Access::HostRead);
        }
        self.record_bounds(rec, terrain, &slot.bounds_jobs, timer)
    }

    /// Makes the current slot's estimate readback hold the coarse texels of `rect`.
    fn reserve_estimates(&mut self, rect: Rect) -> Result<()> {
        let bytes = (rect.width() * rect.height()) as u64 * 16;
        let slot = &mut self.slots[self.slot];
        if slot
            .estimates
            .as_ref()
            .map_or(true, |b| b.desc.size < bytes)
        {
            let size = bytes.next_power_of_two();
            slot.estimates = Some(Buffer::new(
                &self.gpu,
                "tile estimates readback",
                BufferDesc::readback(size),
            )?);
        }
        Ok(())
    }

    /// Takes the coarse texels slot `i`'s submission read back for `jobs` (finished) as their
    /// tiles' bounds, skipping jobs a newer one superseded.
    pub(super) fn apply_estimates(&mut self, i: usize, jobs: &[BoundsJob]) -> Result<()> {
        let (Some(buf), false) = (&self.slots[i].estimates, jobs.is_empty()) else {
            return Ok(());
        };
        let rect = self.slots[i].estimate_rect;
        let n = (rect.width() * rect.height()) as usize;
        let texels: &[[f32; 4]] = bytemuck::cast_slice(buf.mapped(n * 16)?);
        let size = crate::pages::coarse::size_of(&self.desc);
        let tpp = self.desc.page_size / TILE_QUADS;
        take_jobs(
            &mut self.nodes,
            &mut self.bounds_pending,
            tpp,
            jobs,
            &|_, tx, ty| estimate(texels, rect, size, tx, ty),
        );
        Ok(())
    }

    /// Takes the tile bounds slot `i`'s submission computed for `jobs` (finished) into the
    /// quadtree, skipping jobs a newer one superseded.
    pub(super) fn apply_bounds(&mut self, i: usize, jobs: &[BoundsJob]) -> Result<()> {
        if jobs.is_empty() {
            return Ok(());
        }
        let _read = crate::profile::scope("render: bounds readback");
        let tpp = self.desc.page_size / TILE_QUADS;
        let stride_tiles = (self.bounds_stride / 32) as usize;
        let slot = &self.slots[i];
        let mapped = slot.bounds.mapped(slot.bounds.desc.size as usize)?;
        let all: &[TileBounds] = bytemuck::cast_slice(mapped);
        take_jobs(
            &mut self.nodes,
            &mut self.bounds_pending,
            tpp,
            jobs,
            &|k, tx, ty| {
                let id = jobs[k].page;
                let (lx, ly) = (tx - id.x * tpp, ty - id.y * tpp);
                all[k * stride_tiles + (ly * tpp + lx) as usize]
            },
        );
        Ok(())
    }
}

/// Sets the tiles of each of `jobs` that is still its page's newest (`pending`, which it leaves)
/// to `bounds(k, tx, ty)` for job k (tiles per page side `tpp`), then the node bounds above them.
fn take_jobs(
    nodes: &mut NodeBounds,
    pending: &mut HashMap<PageId, ([u32; 4], u64)>,
    tpp: u32,
    jobs: &[BoundsJob],
    bounds: &dyn Fn(usize, u32, u32) -> TileBounds,
) {
    let mut touched = [u32::MAX, u32::MAX, 0, 0];
    for (k, job) in jobs.iter().enumerate() {
        if pending.get(&job.page).map(|p| p.1) != Some(job.seq) {
            continue;
        }
        pending.remove(&job.page);
        set_tiles(nodes, &mut touched, tpp, job.page, job.rect, &|tx, ty| {
            bounds(k, tx, ty)
        });
    }
    if touched[0] < touched[2] {
        let _n = crate::profile::scope("render: node bounds");
        nodes.update(touched);
    }
}

/// The bounds of document tile (tx, ty) estimated from the coarse level (`size` texels; `texels`
/// holds its rectangle `rect`, row-major, [min, max, ..] each): the tile's 65 x 65 texels lie in
/// coarse texels (tx..=tx+1, ty..=ty+1).
fn estimate(texels: &[[f32; 4]], rect: Rect, size: [u32; 2], tx: u32, ty: u32) -> TileBounds {
    let (x0, y0, w) = (rect.x0 as u32, rect.y0 as u32, rect.width() as u32);
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    for y in ty..(ty + 2).min(size[1]) {
        for x in tx..(tx + 2).min(size[0]) {
            let t = texels[((y - y0) * w + (x - x0)) as usize];
            lo = lo.min(t[0]);
            hi = hi.max(t[1]);
        }
    }
    TileBounds {
        min: lo,
        max: hi,
        error: [hi - lo; LEVELS - 1],
    }
}

/// Sets the bounds of tiles `r` of page `id` (tiles per page side `tpp`) to `b(tx, ty)` and
/// widens `touched` (document tiles) over them.
fn set_tiles(
    nodes: &mut NodeBounds,
    touched: &mut [u32; 4],
    tpp: u32,
    id: PageId,
    r: [u32; 4],
    b: &dyn Fn(u32, u32) -> TileBounds,
) {
    let grid = *nodes.grid();
    for ly in r[1]..r[3] {
        for lx in r[0]..r[2] {
            let (tx, ty) = (id.x * tpp + lx, id.y * tpp + ly);
            nodes.set_tile(grid.index(tx, ty), b(tx, ty));
        }
    }
    *touched = union(*touched, document_tiles(tpp, id, r));
}

/// The document's tiles [x0, x1) x [y0, y1) of page `id`'s local tile rectangle `r`.
fn document_tiles(tpp: u32, id: PageId, r: [u32; 4]) -> [u32; 4] {
    let (x, y) = (id.x * tpp, id.y * tpp);
    [x + r[0], y + r[1], x + r[2], y + r[3]]
}
