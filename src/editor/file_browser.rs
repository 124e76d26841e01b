//! The in-app file browser (imgui, no desktop toolkit): one window that picks a file to open or a
//! name to save, for stamps, documents, layers, exports, projects, journals and screenshots. The
//! folder listing and what a typed name means are plain functions (tested); the window only
//! draws them. A typed name may be a whole path (`~/` is the home folder).

use crate::terrain::engines::MapKind;
use imgui::{Condition, Key, Ui};
use std::path::{Path, PathBuf};

/// Height files Scarp reads (README, Height files).
const READ_HEIGHTS: &[&str] = &["png", "tif", "tiff", "r16", "raw", "r32", "exr", "hgt"];
/// Height files Scarp writes.
const WRITE_HEIGHTS: &[&str] = &["png", "tif", "tiff", "r16", "raw", "r32", "exr"];
/// What the open command opens: projects, journals and height files.
const DOCUMENTS: &[&str] = &[
    "scarp", "json", "png", "tif", "tiff", "r16", "raw", "r32", "exr", "hgt",
];

/// What a file is picked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// The stamp brush's image.
    Stamp,
    /// A document to edit instead of this one: a project, a journal or a height file.
    Open,
    /// A height file as a new layer over the document.
    ImportLayer,
    /// The document's heights (the composite) in any format Scarp writes.
    ExportHeights,
    SaveProject,
    SaveJournal,
    /// The window as a PNG.
    Screenshot,
}

impl Purpose {
    pub fn title(self) -> &'static str {
        match self {
            Self::Stamp => "Open a stamp",
            Self::Open => "Open a project, journal or height file",
            Self::ImportLayer => "Import heights as a layer",
            Self::ExportHeights => "Export heights",
            Self::SaveProject => "Save the project",
            Self::SaveJournal => "Save the session's journal",
            Self::Screenshot => "Save a screenshot",
        }
    }

    /// Whether the file is written (a name to save) rather than read.
    pub fn saves(self) -> bool {
        matches!(
            self,
            Self::ExportHeights | Self::SaveProject | Self::SaveJournal | Self::Screenshot
        )
    }

    /// The extensions listed and accepted; a saved name without one gets the first.
    pub fn extensions(self) -> &'static [&'static str] {
        match self {
            Self::Stamp | Self::ImportLayer => READ_HEIGHTS,
            Self::Open => DOCUMENTS,
            Self::ExportHeights => WRITE_HEIGHTS,
            Self::SaveProject => &["scarp"],
            Self::SaveJournal => &["json"],
            Self::Screenshot => &["png"],
        }
    }

    fn button(self) -> &'static str {
        match self {
            Self::ExportHeights => "export",
            Self::ImportLayer => "import",
            p if p.saves() => "save",
            _ => "open",
        }
    }

    /// The name offered when the browser opens.
    fn default_name(self) -> &'static str {
        match self {
            Self::ExportHeights => "heights.png",
            Self::SaveProject => "terrain.scarp",
            Self::SaveJournal => "journal.json",
            Self::Screenshot => "screenshot.png",
            _ => "",
        }
    }
}

/// One line of a folder's listing.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub name: String,
    pub folder: bool,
    pub bytes: u64,
}

/// The entries of `dir` a browser lists: its folders, then its files with one of `extensions`
/// (any case), each group by name; names starting with a dot are left out.
pub fn list(dir: &Path, extensions: &[&str]) -> Result<Vec<Entry>, String> {
    let read = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut entries: Vec<Entry> = read
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            if name.starts_with('.') {
                return None;
            }
            // Follows links: a link to a folder is a folder.
            let meta = std::fs::metadata(e.path()).ok()?;
            let folder = meta.is_dir();
            (folder || has_extension(Path::new(&name), extensions)).then_some(Entry {
                name,
                folder,
                bytes: meta.len(),
            })
        })
        .collect();
    entries.sort_by(|a, b| b.folder.cmp(&a.folder).then_with(|| a.name.cmp(&b.name)));
    Ok(entries)
}

fn has_extension(path: &Path, extensions: &[&str]) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| extensions.iter().any(|x| x.eq_ignore_ascii_case(e)))
}

/// What a name typed in folder `dir` means.
#[derive(Clone, Debug, PartialEq)]
pub enum Choice {
    /// A folder to list.
    Folder(PathBuf),
    /// The file picked: it exists (opening), or its folder does (saving).
    File(PathBuf),
}

/// The path `name` names from folder `dir`: a whole path, `~/…` under the home folder, else
/// relative to `dir`.
fn path_of(dir: &Path, name: &str) -> PathBuf {
    match (name.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => dir.join(name),
    }
}

/// Resolves `name` typed in folder `dir` for `purpose`; a problem in one line naming the file.
pub fn resolve(dir: &Path, name: &str, purpose: Purpose) -> Result<Choice, String> {
    let name = name.trim();
    if name.is_empty() {
        return Err("type a file name, or pick one in the list".into());
    }
    let mut path = path_of(dir, name);
    if path.is_dir() {
        return Ok(Choice::Folder(path));
    }
    let extensions = purpose.extensions();
    if purpose.saves() && path.extension().is_none() {
        path.set_extension(extensions[0]);
    }
    if !has_extension(&path, extensions) {
        return Err(format!(
            "{}: not one of .{}",
            path.display(),
            extensions.join(", .")
        ));
    }
    if purpose.saves() {
        match path.parent() {
            Some(folder) if folder.as_os_str().is_empty() || folder.is_dir() => {}
            Some(folder) => return Err(format!("{}: no such folder", folder.display())),
            None => return Err(format!("{}: not a file name", path.display())),
        }
    } else if !path.is_file() {
        return Err(format!("{}: no such file", path.display()));
    }
    Ok(Choice::File(path))
}

/// What an export writes beyond the name: a region of the document and tiles, or the files an
/// engine takes (docs/engines.md).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ExportOptions {
    /// x, y, width, height in texels; None: the whole document.
    pub region: Option<[u32; 4]>,
    /// Columns and rows of edge-sharing tiles (`NAME_x{i}_y{j}.ext`); None: one file.
    pub tiles: Option<(u32, u32)>,
    /// For this engine (the whole document, its sizes, weight maps and a note); the name's
    /// extension is then the engine's.
    pub engine: Option<crate::terrain::engines::Engine>,
    pub fit: crate::terrain::engines::Fit,
    /// A glTF mesh of the region within this many metres of the heights (docs/engines.md, "A
    /// mesh"), instead of heights; None: heights.
    pub mesh: Option<f32>,
    /// The maps written beside an engine's files, as [`MapKind::ALL`] lists them (the length
    /// spelled out: a constant expression there made the compiler fail on a struct update).
    pub maps: [bool; 8],
}

const _: () = assert!(MapKind::COUNT == 8);

impl ExportOptions {
    /// The maps asked for.
    pub fn map_kinds(&self) -> Vec<MapKind> {
        MapKind::ALL
            .into_iter()
            .zip(self.maps)
            .filter_map(|(k, on)| on.then_some(k))
            .collect()
    }
}

/// The browser window's state.
pub struct FileBrowser {
    pub purpose: Purpose,
    /// The folder listed.
    pub dir: PathBuf,
    /// The folder field (typed, or the folder listed).
    dir_text: String,
    /// The name field: a file in `dir`, or any path.
    pub name: String,
    entries: Result<Vec<Entry>, String>,
    problem: Option<String>,
    /// Put the keyboard in the name field on the next frame (it opens ready to type).
    focus_name: bool,
    /// A file that exists, asked whether to replace.
    replace: Option<PathBuf>,
    /// Exports: the region and tiles.
    pub export: ExportOptions,
}

/// How a frame of the browser ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Still open.
    Open,
    Cancelled,
    Chosen(PathBuf),
}

impl FileBrowser {
    /// A browser for `purpose` listing `dir` (the current folder if it is not one).
    pub fn new(purpose: Purpose, dir: &Path) -> Self {
        let dir = if dir.is_dir() {
            dir.to_path_buf()
        } else {
            PathBuf::from(".")
        };
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        let mut b = Self {
            purpose,
            dir_text: String::new(),
            dir: PathBuf::new(),
            name: purpose.default_name().to_string(),
            entries: Ok(Vec::new()),
            problem: None,
            focus_name: true,
            replace: None,
            export: ExportOptions::default(),
        };
        b.go(dir);
        b
    }

    fn go(&mut self, dir: PathBuf) {
        self.entries = list(&dir, self.purpose.extensions());
        self.dir_text = dir.display().to_string();
        self.dir = dir;
        self.replace = None;
    }

    /// Keeps the browser open on `path` with `problem` shown (a choice the caller refused).
    pub fn refuse(&mut self, problem: String) {
        self.replace = None;
        self.problem = Some(problem);
    }

    /// How many of the files saving to `path` writes exist already: the file, or an export's
    /// tiles.
    fn existing(&self, path: &Path) -> usize {
        match (self.purpose, self.export.tiles) {
            (Purpose::ExportHeights, Some((cols, rows))) => (0..rows)
                .flat_map(|j| (0..cols).map(move |i| (i, j)))
                .filter(|&(i, j)| crate::terrain::tiles::tile_path(path, i, j).exists())
                .count(),
            _ => usize::from(path.exists()),
        }
    }

    /// Takes the name field: a folder is listed, a file chosen (a saved file that exists after
    /// asking), a problem shown.
    fn confirm(&mut self) -> Outcome {
        match resolve(&self.dir, &self.name, self.purpose) {
            Ok(Choice::Folder(dir)) => {
                self.name.clear();
                self.problem = None;
                self.go(dir);
                Outcome::Open
            }
            Ok(Choice::File(path)) => {
                if self.purpose.saves()
                    && self.existing(&path) > 0
                    && self.replace.as_ref() != Some(&path)
                {
                    self.replace = Some(path);
                    return Outcome::Open;
                }
                Outcome::Chosen(path)
            }
            Err(problem) => {
                self.problem = Some(problem);
                Outcome::Open
            }
        }
    }

    /// Draws the browser; says whether a file was chosen or the browser closed.
    pub fn build(&mut self, ui: &Ui) -> Outcome {
        let [w, h] = ui.io().display_size;
        let size = [640.0f32.min(w - 20.0), 440.0f32.min(h - 40.0)];
        let mut outcome = Outcome::Open;
        let mut open = true;
        ui.window(self.purpose.title())
            .position(
                [0.5 * (w - size[0]), 0.5 * (h - size[1])],
                Condition::Appearing,
            )
            .size(size, Condition::Appearing)
            .collapsible(false)
            .opened(&mut open)
            .build(|| outcome = self.contents(ui));
        if !open || (ui.is_key_pressed(Key::Escape) && outcome == Outcome::Open) {
            return Outcome::Cancelled;
        }
        outcome
    }

    fn contents(&mut self, ui: &Ui) -> Outcome {
        let mut outcome = Outcome::Open;
        if ui.button("up") {
            if let Some(parent) = self.dir.parent() {
                self.go(parent.to_path_buf());
            }
        }
        super::widgets::tip(ui, "The folder above this one");
        ui.same_line();
        ui.set_next_item_width(-1.0);
        if ui
            .input_text("##folder", &mut self.dir_text)
            .enter_returns_true(true)
            .build()
        {
            let dir = path_of(Path::new("/"), self.dir_text.trim());
            if dir.is_dir() {
                self.problem = None;
                self.go(dir);
            } else {
                self.problem = Some(format!("{}: no such folder", dir.display()));
            }
        }
        let rows = 3.0
            + f32::from(u8::from(self.replace.is_some()))
            + f32::from(u8::from(self.problem.is_some()))
            + if self.purpose == Purpose::ExportHeights {
                3.0
            } else {
                0.0
            };
        let below = ui.frame_height_with_spacing() * rows;
        ui.child_window("entries")
            .size([0.0, -below])
            .border(true)
            .build(|| outcome = self.entries_list(ui));
        if self.purpose == Purpose::ExportHeights {
            export_options(ui, &mut self.export);
        }
        ui.text(if self.purpose.saves() {
            "save as"
        } else {
            "file"
        });
        ui.same_line();
        if std::mem::take(&mut self.focus_name) {
            ui.set_keyboard_focus_here();
        }
        ui.set_next_item_width(-140.0);
        let entered = ui
            .input_text("##name", &mut self.name)
            .enter_returns_true(true)
            .build();
        super::widgets::tip(
            ui,
            &format!(
                "A name in this folder, or a whole path; .{}",
                self.purpose.extensions().join(", .")
            ),
        );
        ui.same_line();
        if ui.button(self.purpose.button()) || entered {
            outcome = self.confirm();
            // Enter keeps the keyboard in the name field.
            self.focus_name = entered;
        }
        ui.same_line();
        if ui.button("cancel") {
            outcome = Outcome::Cancelled;
        }
        if let Some(path) = self.replace.clone() {
            let what = match self.existing(&path) {
                n if n > 1
                    || self.export.tiles.is_some() && self.purpose == Purpose::ExportHeights =>
                {
                    format!("{n} of its tiles exist:")
                }
                _ => format!("{} exists:", file_name(&path)),
            };
            ui.text_colored([1.0, 0.8, 0.3, 1.0], what);
            ui.same_line();
            if ui.button("replace it") {
                outcome = Outcome::Chosen(path);
            }
            ui.same_line();
            if ui.button("keep it") {
                self.replace = None;
            }
        }
        if let Some(p) = &self.problem {
            let _red = ui.push_style_color(imgui::StyleColor::Text, [1.0, 0.4, 0.3, 1.0]);
            ui.text_wrapped(p);
        }
        outcome
    }

    fn entries_list(&mut self, ui: &Ui) -> Outcome {
        let entries = match &self.entries {
            Ok(e) => e.clone(),
            Err(problem) => {
                ui.text_colored([1.0, 0.4, 0.3, 1.0], problem);
                return Outcome::Open;
            }
        };
        if entries.is_empty() {
            ui.text_disabled(format!(
                "no folders and no .{} files here",
                self.purpose.extensions().join(", .")
            ));
        }
        for e in entries {
            let label = if e.folder {
                format!("{}/", e.name)
            } else {
                format!("{}  ({})", e.name, human_bytes(e.bytes))
            };
            let clicked = ui
                .selectable_config(&label)
                .selected(!e.folder && e.name == self.name)
                .allow_double_click(true)
                .build();
            if !clicked {
                continue;
            }
            let double = ui.is_mouse_double_clicked(imgui::MouseButton::Left);
            if e.folder {
                if double {
                    self.go(self.dir.join(&e.name));
                    return Outcome::Open;
                }
            } else {
                self.name = e.name.clone();
                self.problem = None;
                if double {
                    return self.confirm();
                }
            }
        }
        Outcome::Open
    }
}

/// What map `kind` holds, in words (docs/maps.md).
fn map_tip(kind: MapKind) -> &'static str {
    match kind {
        MapKind::Slope => "NAME_slope.exr: the slope in degrees",
        MapKind::Curvature => {
            "NAME_curvature.exr: the Laplacian of the heights, 1/m, concave above 0"
        }
        MapKind::Profile => "NAME_profile.exr: profile curvature, 1/m (along the steepest slope)",
        MapKind::Plan => "NAME_plan.exr: plan curvature, 1/m (of the contour lines)",
        MapKind::Drainage => "NAME_drainage.exr: D8 drainage area, m² (counted on the GPU)",
        MapKind::Wetness => "NAME_wetness.exr: topographic wetness, ln(a / tan slope)",
        MapKind::Wear => "NAME_wear.exr: metres of ground erosion removed (0 where none ran)",
        MapKind::Deposits => "NAME_deposits.exr: metres erosion laid down (0 where none ran)",
    }
}

/// The export's engine preset, region and tiles.
fn export_options(ui: &Ui, e: &mut ExportOptions) {
    use crate::terrain::engines::{Engine, Fit};
    let engines = [
        None,
        Some(Engine::Unreal),
        Some(Engine::Unity),
        Some(Engine::Godot),
    ];
    let names = [
        "heights only",
        "Unreal",
        "Unity",
        "Godot (Terrain3D)",
        "glTF mesh (Blender...)",
    ];
    let mut i = match e.mesh {
        Some(_) => engines.len(),
        None => engines.iter().position(|x| *x == e.engine).unwrap_or(0),
    };
    ui.set_next_item_width(ui.current_font_size() * 10.0);
    if ui.combo_simple_string("for", &mut i, &names) {
        e.engine = engines.get(i).copied().flatten();
        e.mesh = (i == engines.len()).then_some(e.mesh.unwrap_or(0.25));
    }
    super::widgets::tip(
        ui,
        "For an engine: the heights at its sizes, a weight or splat map per material (what \
         the viewport shows) and NAME.txt with what to enter in its import dialog. A glTF \
         mesh: NAME.glb of the region, in metres, simplified within the error you set",
    );
    if let Some(bound) = &mut e.mesh {
        ui.same_line();
        ui.set_next_item_width(ui.current_font_size() * 6.0);
        if ui.input_float("error (m)", bound).build() {
            *bound = bound.max(0.0);
        }
        super::widgets::tip(
            ui,
            "The mesh's largest vertical distance from the heights at any texel, metres (0: \
             every texel a vertex)",
        );
    }
    if e.engine.is_some() {
        ui.same_line();
        let mut crop = e.fit == Fit::Crop;
        if ui.checkbox("crop (else resample)", &mut crop) {
            e.fit = if crop { Fit::Crop } else { Fit::Resample };
        }
        // Four a row: the dialog is narrower than the eight.
        for (i, kind) in MapKind::ALL.into_iter().enumerate() {
            if i % 4 == 0 {
                ui.text(if i == 0 { "maps:" } else { "     " });
            }
            ui.same_line();
            ui.checkbox(kind.name(), &mut e.maps[i]);
            super::widgets::tip(ui, map_tip(kind));
        }
        return;
    }
    let mut crop = e.region.is_some();
    if ui.checkbox("region", &mut crop) {
        e.region = crop.then_some([0, 0, 1024, 1024]);
    }
    super::widgets::tip(
        ui,
        "Export only this rectangle of the document: x, y, width, height (texels)",
    );
    if let Some(r) = &mut e.region {
        ui.same_line();
        let mut v = r.map(|x| x as i32);
        ui.set_next_item_width(-1.0);
        if ui.input_int4("##region", &mut v).build() {
            *r = v.map(|x| x.max(0) as u32);
        }
    }
    if e.mesh.is_some() {
        return;
    }
    let mut split = e.tiles.is_some();
    if ui.checkbox("tiles", &mut split) {
        e.tiles = split.then_some((2, 2));
    }
    super::widgets::tip(
        ui,
        "Split into columns x rows tiles that share their edge texels (Unreal's and World \
         Machine's convention), named NAME_x{i}_y{j}; integer tiles share one height range",
    );
    if let Some((c, r)) = &mut e.tiles {
        ui.same_line();
        let mut v = [*c as i32, *r as i32];
        ui.set_next_item_width(-1.0);
        if ui.input_int2("##tiles", &mut v).build() {
            *c = v[0].clamp(1, 1024) as u32;
            *r = v[1].clamp(1, 1024) as u32;
        }
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into(),
    )
}

fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for f in [
            "b.png",
            "a.R32",
            "notes.txt",
            ".hidden.png",
            "p.scarp",
            "j.json",
        ] {
            std::fs::write(d.path().join(f), b"x").unwrap();
        }
        std::fs::create_dir(d.path().join("zeta")).unwrap();
        std::fs::create_dir(d.path().join("alpha")).unwrap();
        d
    }

    #[test]
    fn folders_come_first_then_the_purposes_files_by_name() {
        let d = folder();
        let names = |p: Purpose| -> Vec<String> {
            list(d.path(), p.extensions())
                .unwrap()
                .into_iter()
                .map(|e| e.name)
                .collect()
        };
        assert_eq!(names(Purpose::Stamp), ["alpha", "zeta", "a.R32", "b.png"]);
        assert_eq!(
            names(Purpose::Open),
            ["alpha", "zeta", "a.R32", "b.png", "j.json", "p.scarp"]
        );
        assert_eq!(names(Purpose::SaveJournal), ["alpha", "zeta", "j.json"]);
        let e = list(&d.path().join("nope"), &["png"]).unwrap_err();
        assert!(e.contains("nope"), "{e}");
    }

    #[test]
    fn a_typed_name_is_a_folder_a_file_or_a_one_line_problem() {
        let d = folder();
        let dir = d.path();
        assert_eq!(
            resolve(dir, "alpha", Purpose::Stamp),
            Ok(Choice::Folder(dir.join("alpha")))
        );
        assert_eq!(
            resolve(dir, " b.png ", Purpose::Stamp),
            Ok(Choice::File(dir.join("b.png")))
        );
        // A whole path wins over the folder.
        let whole = dir.join("a.R32");
        assert_eq!(
            resolve(Path::new("/"), whole.to_str().unwrap(), Purpose::Open),
            Ok(Choice::File(whole))
        );
        let missing = resolve(dir, "c.png", Purpose::Stamp).unwrap_err();
        assert!(missing.ends_with("c.png: no such file"), "{missing}");
        let wrong = resolve(dir, "notes.txt", Purpose::Stamp).unwrap_err();
        assert!(wrong.contains("notes.txt: not one of .png"), "{wrong}");
        assert!(resolve(dir, "", Purpose::Open).is_err());
        // Saving: the extension is added when missing, the folder must exist, the file need not.
        assert_eq!(
            resolve(dir, "out", Purpose::ExportHeights),
            Ok(Choice::File(dir.join("out.png")))
        );
        assert_eq!(
            resolve(dir, "out.exr", Purpose::ExportHeights),
            Ok(Choice::File(dir.join("out.exr")))
        );
        let hgt = resolve(dir, "out.hgt", Purpose::ExportHeights).unwrap_err();
        assert!(hgt.contains("not one of"), "{hgt}");
        let no_folder = resolve(dir, "nowhere/out.png", Purpose::Screenshot).unwrap_err();
        assert!(
            no_folder.ends_with("nowhere: no such folder"),
            "{no_folder}"
        );
        assert_eq!(
            resolve(dir, "s", Purpose::SaveProject),
            Ok(Choice::File(dir.join("s.scarp")))
        );
    }

    #[test]
    fn saving_over_a_file_asks_first() {
        let d = folder();
        let mut b = FileBrowser::new(Purpose::SaveJournal, d.path());
        b.name = "j.json".into();
        assert_eq!(b.confirm(), Outcome::Open, "asks");
        assert_eq!(b.replace, Some(d.path().join("j.json")));
        assert_eq!(b.confirm(), Outcome::Chosen(d.path().join("j.json")));
        b.name = "new.json".into();
        assert_eq!(b.confirm(), Outcome::Chosen(d.path().join("new.json")));
        // An export in tiles asks when any of its tiles exists, not its name.
        let mut e = FileBrowser::new(Purpose::ExportHeights, d.path());
        e.export.tiles = Some((2, 1));
        e.name = "t.png".into();
        assert_eq!(e.confirm(), Outcome::Chosen(d.path().join("t.png")));
        std::fs::write(d.path().join("t_x1_y0.png"), b"x").unwrap();
        assert_eq!(e.confirm(), Outcome::Open, "asks");
        assert_eq!(e.confirm(), Outcome::Chosen(d.path().join("t.png")));
        b.name = "zeta".into();
        assert_eq!(b.confirm(), Outcome::Open);
        assert_eq!(b.dir, d.path().join("zeta"));
        assert!(b.name.is_empty());
    }
}
