//! A document's fields by name. Every document has the `height` field (what brushes paint and the
//! renderer draws); layers, masks, water and sediment are further fields of the same page grid.

use super::error::{PageError, Result};
use super::field::Field;
use super::geometry::{DocumentDesc, PageId};
use crate::gpu::Gpu;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Name of the field every document has.
pub const HEIGHT: &str = "height";

/// Named sparse fields of one document.
pub struct PageStore {
    gpu: Arc<Gpu>,
    fields: BTreeMap<String, Field>,
}

impl PageStore {
    /// A store holding `height` as its height field.
    pub fn new(height: Field) -> Self {
        Self {
            gpu: height.gpu().clone(),
            fields: BTreeMap::from([(HEIGHT.to_string(), height)]),
        }
    }

    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// The height field.
    pub fn height(&self) -> &Field {
        &self.fields[HEIGHT]
    }

    pub fn height_mut(&mut self) -> &mut Field {
        self.fields
            .get_mut(HEIGHT)
            .expect("every store has a height field")
    }

    /// The field called `name`, if the document has one.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.get(name)
    }

    pub fn field_mut(&mut self, name: &str) -> Option<&mut Field> {
        self.fields.get_mut(name)
    }

    /// The names of the fields, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.fields.keys().map(String::as_str)
    }

    /// Adds a flat field on the height field's page grid, in `desc`'s format and range.
    pub fn add_field(&mut self, name: &str, desc: DocumentDesc, flat: f32) -> Result<&mut Field> {
        let grid = self.height().desc();
        if (desc.width, desc.height, desc.page_size) != (grid.width, grid.height, grid.page_size) {
            return Err(PageError::FieldGrid(name.to_string()));
        }
        if self.fields.contains_key(name) {
            return Err(PageError::FieldExists(name.to_string()));
        }
        let field = Field::new(&self.gpu, desc, flat)?;
        Ok(self.fields.entry(name.to_string()).or_insert(field))
    }

    /// Puts `field` under `name`, returning the field it replaces.
    pub fn insert_field(&mut self, name: &str, field: Field) -> Result<Option<Field>> {
        let grid = self.height().desc();
        let desc = field.desc();
        if (desc.width, desc.height, desc.page_size) != (grid.width, grid.height, grid.page_size) {
            return Err(PageError::FieldGrid(name.to_string()));
        }
        Ok(self.fields.insert(name.to_string(), field))
    }

    /// Before a derived field `name` is computed at pages `ids` from the heights around them:
    /// brings the height pages around `ids` (their 3x3 neighbourhoods) onto the GPU, and gives
    /// the field new versions of `ids` to write.
    pub fn prepare_derived(&mut self, name: &str, ids: &[PageId]) -> Result<()> {
        let desc = *self.height().desc();
        let around: BTreeSet<PageId> = ids.iter().flat_map(|&id| desc.neighbourhood(id)).collect();
        let around: Vec<PageId> = around.into_iter().collect();
        self.height_mut().ensure_visible(&around)?;
        self.field_mut(name)
            .ok_or_else(|| PageError::NoField(name.to_string()))?
            .overwrite_pages(ids)
    }

    /// Removes the field called `name` (never `height`).
    pub fn remove_field(&mut self, name: &str) -> Option<Field> {
        if name == HEIGHT {
            return None;
        }
        self.fields.remove(name)
    }
}
