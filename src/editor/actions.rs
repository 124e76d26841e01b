//! What the panels ask of the editor: the actions one frame's panels push (the editor runs
//! them after the panels are drawn).

use super::file_browser::Purpose;
use std::path::PathBuf;

/// What the user asked for this frame, beyond editing settings in place.
#[derive(Clone, Debug, PartialEq)]
pub enum UiAction {
    SavePreset(String),
    LoadPreset(String),
    SaveProject(String),
    Recover,
    DiscardRecovery,
    RecoverUntitled,
    DiscardUntitled,
    Undo,
    Redo,
    FrameAll,
    /// Start recording a trace, or stop and write it.
    ToggleTrace,
    /// Capture the next frame in RenderDoc.
    CaptureFrame,
    /// A layer step from the layers panel (one undo step).
    Layer(crate::layers::LayerOp),
    /// Solo view on or off.
    Solo(bool),
    /// Start the erosion panel's region run.
    ErodeStart,
    /// Pause (true) or continue the region run.
    ErodePause(bool),
    /// Finish the region run now (one undo step).
    ErodeFinish,
    /// The file browser's choice.
    Chosen(Purpose, PathBuf),
    /// The stamp brush takes the panel's stamp at this index.
    PickStamp(usize),
    /// Run the path panel's path (one undo step).
    PathApply,
    /// Start the geology panel's live run.
    Geology,
    /// Pause (true) or continue the live geology run.
    GeologyPause(bool),
    /// Stop the live geology run where it is (one undo step).
    GeologyStop,
    /// Give the live geology run up: the region goes back to what it was.
    GeologyCancel,
    /// The close panel's answer.
    Close(CloseChoice),
    /// Open the older save of the project whose newest save is damaged.
    OpenOlderSave,
    /// Undo or redo to the History panel's entry at this index.
    History(usize),
    /// The sea was turned on: put it at the low ground.
    SeaAtLowGround,
}

/// What to do with unsaved steps on closing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloseChoice {
    /// Save (into the project, or a project chosen in the browser), then close.
    Save,
    /// Close; the unsaved steps (and their recovery journal) are dropped.
    Discard,
    /// Keep working.
    Cancel,
}
