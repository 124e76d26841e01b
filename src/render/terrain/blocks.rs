//! The document's pages grouped in blocks: a block is PAGE_BLOCK x PAGE_BLOCK pages, drawn
//! with one descriptor set that binds them and the ring of pages around them (PAGE_SLOTS
//! slots). Geometry only: which pages a block's slots hold, where it starts, its tree level.

use crate::pages::{DocumentDesc, PageId};
use crate::render::quadtree::PAGE_LEVEL;
use crate::render::shared::{OVERLAY_SPAN, PAGE_BLOCK, PAGE_SLOTS, PAGE_SPAN, TILE_QUADS};

/// The block grid of one document.
#[derive(Clone, Copy, Debug)]
pub(super) struct Blocks {
    desc: DocumentDesc,
}

impl Blocks {
    pub(super) fn new(desc: DocumentDesc) -> Self {
        Self { desc }
    }

    /// Every page of the document, row by row.
    pub(super) fn page_ids(&self) -> impl Iterator<Item = PageId> {
        let (px, py) = (self.desc.pages_x(), self.desc.pages_y());
        (0..py).flat_map(move |y| (0..px).map(move |x| PageId { x, y }))
    }

    /// The page at offset (dx, dy) from `id`, if inside the document.
    pub(super) fn neighbour(&self, id: PageId, dx: i32, dy: i32) -> Option<PageId> {
        self.desc.neighbour(id, dx.into(), dy.into())
    }

    /// The block holding page `id`.
    pub(super) fn of(id: PageId) -> PageId {
        PageId {
            x: id.x / PAGE_BLOCK,
            y: id.y / PAGE_BLOCK,
        }
    }

    /// The pages of `block`'s set, slot by slot (None outside the document).
    pub(super) fn span(&self, block: PageId) -> impl Iterator<Item = (usize, Option<PageId>)> {
        let first = PageId {
            x: block.x * PAGE_BLOCK,
            y: block.y * PAGE_BLOCK,
        };
        let blocks = *self;
        (0..PAGE_SLOTS).map(move |slot| {
            let (sx, sy) = (
                (slot as u32 % PAGE_SPAN) as i32,
                (slot as u32 / PAGE_SPAN) as i32,
            );
            (slot, blocks.neighbour(first, sx - 1, sy - 1))
        })
    }

    /// First texel of `block`.
    pub(super) fn origin(&self, block: PageId) -> [i32; 2] {
        let step = (PAGE_BLOCK * self.desc.page_size) as i32;
        [block.x as i32 * step, block.y as i32 * step]
    }

    /// The pages of `block` and of the next row and column in the document, with their overlay
    /// slots.
    pub(super) fn overlay_pages(&self, block: PageId) -> impl Iterator<Item = (usize, PageId)> {
        let (b, span) = (PAGE_BLOCK, OVERLAY_SPAN);
        let (px, py) = (self.desc.pages_x(), self.desc.pages_y());
        (0..span * span).filter_map(move |slot| {
            let id = PageId {
                x: block.x * b + slot % span,
                y: block.y * b + slot / span,
            };
            (id.x < px && id.y < py).then_some((slot as usize, id))
        })
    }

    /// Level of the largest page node that fits in one block (whose set it binds).
    pub(super) fn level(&self) -> u8 {
        let block_tiles = self.desc.page_size * PAGE_BLOCK / TILE_QUADS;
        (block_tiles.trailing_zeros() as u8).min(PAGE_LEVEL)
    }
}
