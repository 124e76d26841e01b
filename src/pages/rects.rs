//! A rectangle of a field across its pages: read and written through the host
//! ([`read`], [`write()`]), or edited on the GPU ([`RectEdit`]: the pages' texels copied out to a
//! buffer, worked on, copied back in), each write one undo step.

use super::error::{PageError, Result};
use super::field::{Field, PAGES_PER_TRANSFER};
use super::geometry::{decode, encode, HeightFormat, PageId, Rect};
use super::page::GpuPage;
use super::residency::Version;
use crate::gpu::{Access, Buffer, BufferDesc, Recorder};
use std::rc::Rc;

/// The committed values of `rect` (document texels, inside the document), row-major.
pub fn read(field: &Field, rect: Rect) -> Result<Vec<f32>> {
    let desc = field.desc();
    let (w, h) = (rect.width() as usize, rect.height() as usize);
    let mut out = vec![field.flat(); w * h];
    let ids: Vec<PageId> = desc.pages_in(&rect);
    let held: Vec<(PageId, &Rc<Version>)> = ids
        .iter()
        .filter_map(|id| field.versions().page(*id).map(|v| (*id, v)))
        .collect();
    for chunk in held.chunks(PAGES_PER_TRANSFER) {
        let versions: Vec<&Version> = chunk.iter().map(|(_, v)| &***v).collect();
        for ((id, _), bytes) in chunk.iter().zip(field.places().read(&versions)?) {
            let values = decode(desc, &bytes);
            let r = desc.page_rect(*id);
            let part = r.intersect(&rect);
            for y in part.y0..part.y1 {
                let src = ((y - r.y0) * r.width() + (part.x0 - r.x0)) as usize;
                let dst = ((y - rect.y0) as usize) * w + (part.x0 - rect.x0) as usize;
                let n = part.width() as usize;
                out[dst..dst + n].copy_from_slice(&values[src..src + n]);
            }
        }
    }
    Ok(out)
}

/// Writes `values` (row-major over `rect`, inside the document; quantized for r16 fields) as
/// one undo step (with `join`, part of the last one): the pages `rect` touches get new versions
/// holding their old values outside `rect`. No other edit may be under way.
pub fn write(field: &mut Field, rect: Rect, values: &[f32], join: bool) -> Result<()> {
    assert_eq!(
        values.len(),
        (rect.width() * rect.height()) as usize,
        "values of the whole rectangle"
    );
    let ids = field.desc().pages_in(&rect);
    field.begin_versions(ids.clone(), join);
    let mut rects = Vec::with_capacity(ids.len());
    let r = write_working(field, rect, values, &ids, &mut rects);
    // Noted even when a transfer failed part way: some pages may be written.
    field.mark_changed_in(ids, &rects);
    field.commit_versions(join);
    r
}

/// Uploads the parts of `values` (over `rect`) into the working versions of pages `ids`, a
/// batch at a time; `rects` gets each page's written part (page-local).
fn write_working(
    field: &mut Field,
    rect: Rect,
    values: &[f32],
    ids: &[PageId],
    rects: &mut Vec<(PageId, Rect)>,
) -> Result<()> {
    let desc = *field.desc();
    let w = rect.width() as usize;
    for (c, chunk) in ids.chunks(PAGES_PER_TRANSFER).enumerate() {
        let first = c * PAGES_PER_TRANSFER;
        let indices: Vec<usize> = (first..first + chunk.len()).collect();
        field.ensure_working(&indices, &[], None)?;
        let mut parts = Vec::with_capacity(chunk.len());
        let mut bytes: Vec<u8> = Vec::new();
        for id in chunk {
            let r = desc.page_rect(*id);
            let part = r.intersect(&rect);
            let offset = bytes.len() as u64;
            for y in part.y0..part.y1 {
                let src = ((y - rect.y0) as usize) * w + (part.x0 - rect.x0) as usize;
                bytes.extend(encode(&desc, &values[src..src + part.width() as usize]));
            }
            parts.push((offset, part.translate(-r.x0, -r.y0)));
            rects.push((*id, part.translate(-r.x0, -r.y0)));
        }
        let gpu = field.gpu();
        let mut up = Buffer::new(
            gpu,
            "rectangle upload",
            BufferDesc::upload(bytes.len() as u64),
        )?;
        up.write(&bytes)?;
        let mut rec = Recorder::new(gpu)?;
        rec.buffer(&up, Access::HostWrite);
        for (&i, (offset, local)) in indices.iter().zip(&parts) {
            let page = field
                .working_page(i)
                .ok_or_else(|| super::field::budget_too_small(field))?;
            rec.copy_buffer_to_image_region(
                &up,
                *offset,
                page.front(),
                [local.x0, local.y0],
                [local.width() as u32, local.height() as u32],
            );
            // The back image lacks what the front one now has.
            page.set_stale(page.stale().union(local));
        }
        rec.submit_and_wait()?;
    }
    Ok(())
}

/// An edit of a rectangle done on the GPU (r32f fields: texels move as f32): begun, its reads
/// and writes of the pages recorded ([`Self::record_out`], [`Self::record_in`]) and submitted,
/// then ended ([`Self::end`]) as one undo step.
#[must_use = "a rect edit ends with RectEdit::end"]
pub struct RectEdit {
    rect: Rect,
    join: bool,
}

impl RectEdit {
    /// Starts an edit of `rect`: the pages it touches get working versions
    /// ([`Field::begin_versions`], `join` as there) brought onto the GPU. Fails (nothing
    /// changed) when the pages do not fit the GPU budget together.
    pub fn begin(field: &mut Field, rect: Rect, join: bool) -> Result<Self> {
        assert_eq!(
            field.desc().format,
            HeightFormat::R32f,
            "texels move as f32"
        );
        let ids = field.desc().pages_in(&rect);
        let indices: Vec<usize> = (0..ids.len()).collect();
        field.begin_versions(ids, join);
        let fits = field
            .ensure_working(&indices, &[], None)
            .map(|_| indices.iter().all(|&i| field.working_page(i).is_some()));
        match fits {
            Ok(true) => Ok(Self { rect, join }),
            other => {
                // Nothing was written: the working versions hold the old values.
                field.commit_versions(join);
                other?;
                Err(PageError::BudgetTooSmall {
                    needed: field.versions().bytes() * indices.len() as u64,
                    budget: field.places().budgets().gpu.unwrap_or(0),
                })
            }
        }
    }

    /// The working pages of the edit with their page rectangles and their parts in the edit's
    /// rectangle.
    fn parts<'a>(&self, field: &'a Field) -> impl Iterator<Item = (&'a GpuPage, Rect, Rect)> {
        let rect = self.rect;
        let (ids, _) = field.versions().working();
        ids.iter().enumerate().map(move |(i, id)| {
            let page = field
                .working_page(i)
                .expect("RectEdit::begin brought them in");
            let r = field.desc().page_rect(*id);
            (page, r, r.intersect(&rect))
        })
    }

    /// Records copies of the rectangle out of the edit's working pages into `dst`: f32 texels,
    /// row-major over the rectangle from byte 0.
    pub fn record_out<'a>(&self, field: &'a Field, rec: &mut Recorder<'a>, dst: &'a Buffer) {
        let rect = self.rect;
        for (page, r, part) in self.parts(field) {
            let offset = ((part.y0 - rect.y0) * rect.width() + (part.x0 - rect.x0)) as u64 * 4;
            rec.copy_image_region_to_buffer_rows(
                page.front(),
                [part.x0 - r.x0, part.y0 - r.y0],
                [part.width() as u32, part.height() as u32],
                dst,
                offset,
                rect.width() as u32,
            );
        }
    }

    /// Records copies of `src` (f32 texels, row-major over the rectangle from byte 0) into the
    /// edit's working pages.
    pub fn record_in<'a>(&self, field: &'a Field, rec: &mut Recorder<'a>, src: &'a Buffer) {
        let rect = self.rect;
        for (page, r, part) in self.parts(field) {
            let offset = ((part.y0 - rect.y0) * rect.width() + (part.x0 - rect.x0)) as u64 * 4;
            rec.copy_buffer_rows_to_image(
                src,
                offset,
                rect.width() as u32,
                page.front(),
                [part.x0 - r.x0, part.y0 - r.y0],
                [part.width() as u32, part.height() as u32],
            );
            // The back image lacks what the front one now has.
            let local = part.translate(-r.x0, -r.y0);
            page.set_stale(page.stale().union(&local));
        }
    }

    /// Ends the edit once its recorded work is submitted: the values changed inside the
    /// rectangle, and the working versions become current as one undo step (with `join`, part
    /// of the last).
    pub fn end(self, field: &mut Field) {
        let ids = field.versions().working().0.to_vec();
        let rects: Vec<(PageId, Rect)> = ids
            .iter()
            .map(|id| {
                let r = field.desc().page_rect(*id);
                (*id, r.intersect(&self.rect).translate(-r.x0, -r.y0))
            })
            .collect();
        field.mark_changed_in(ids, &rects);
        field.commit_versions(self.join);
    }
}
