//! One version of one page on the GPU: a pair of storage images, which of them is current, and
//! where the other one is stale. Ping-pong passes read the front image and write the back one;
//! in-place passes write the front. The pair's descriptor sets are made once, by whoever binds
//! the page first (the brush engine), and live with the page.

use crate::gpu::{vk, DescriptorSet, Image, Result};
use crate::pages::geometry::Rect;
use std::cell::{Cell, OnceCell};

/// Descriptor sets over a page's image pair, indexed by the front image: `ping_pong[f]` reads
/// image f and writes the other, `in_place[f]` reads and writes image f.
pub struct PairSets {
    pub ping_pong: [DescriptorSet; 2],
    pub in_place: [DescriptorSet; 2],
}

/// One version of a page: its image pair and which image is current.
pub struct GpuPage {
    pub(crate) images: [Image; 2],
    front: Cell<usize>,
    /// Page-local rectangle the last pass wrote with new values: the back image lacks it.
    stale: Cell<Rect>,
    sets: OnceCell<PairSets>,
}

impl GpuPage {
    /// A page whose images are both undefined (stale everywhere: `whole`).
    pub(crate) fn new(images: [Image; 2], whole: Rect) -> Self {
        Self {
            images,
            front: Cell::new(0),
            stale: Cell::new(whole),
            sets: OnceCell::new(),
        }
    }

    /// The image holding the page's current heights.
    pub fn front(&self) -> &Image {
        &self.images[self.front.get()]
    }

    /// The other image of the pair.
    pub fn back(&self) -> &Image {
        &self.images[1 - self.front.get()]
    }

    /// Image `i` (0 or 1) of the pair.
    pub fn image(&self, i: usize) -> &Image {
        &self.images[i]
    }

    /// Which image is the front (0 or 1).
    pub fn front_index(&self) -> usize {
        self.front.get()
    }

    /// Makes image `i` the front.
    pub fn set_front(&self, i: usize) {
        self.front.set(i);
    }

    /// Swaps front and back (after a ping-pong pass).
    pub fn flip(&self) {
        self.front.set(1 - self.front.get());
    }

    pub fn stale(&self) -> Rect {
        self.stale.get()
    }

    pub fn set_stale(&self, r: Rect) {
        self.stale.set(r);
    }

    /// The pair's descriptor sets, made by `bind(read, written)` on first use.
    pub fn sets(
        &self,
        bind: impl Fn(&Image, &Image) -> Result<DescriptorSet>,
    ) -> Result<&PairSets> {
        if let Some(s) = self.sets.get() {
            return Ok(s);
        }
        let [a, b] = &self.images;
        let made = PairSets {
            ping_pong: [bind(a, b)?, bind(b, a)?],
            in_place: [bind(a, a)?, bind(b, b)?],
        };
        Ok(self.sets.get_or_init(|| made))
    }

    /// Width and height of the images.
    pub fn extent(&self) -> [u32; 2] {
        let e = self.images[0].desc.extent;
        [e.width, e.height]
    }

    /// GPU memory of the image pair.
    pub fn bytes(&self) -> u64 {
        let e = self.images[0].desc.extent;
        let texel = if self.images[0].desc.format == vk::Format::R16_UNORM {
            2
        } else {
            4
        };
        u64::from(e.width) * u64::from(e.height) * texel * 2
    }
}
