//! One writer per project: a process that opens a project to write it (the editor for its whole
//! session, `scarp apply --out/--onto` and `scarp convert … x.scarp` for the command) holds an
//! advisory lock, `flock` on `.NAME.scarp.lock` beside the project, which the OS releases when the
//! process ends however it ends. A second writer is refused at once with one line naming the
//! holder (its pid and command, which the holder writes into the lock file). The lock is a file
//! of its own because saves replace the project's file (atomic rename) and a lock on it would
//! stay with the replaced one; the lock file is removed when the lock is let go.

use crate::atomic_file::FileError;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// The write lock of one project, held until dropped.
#[derive(Debug)]
pub struct ProjectLock {
    file: File,
    path: PathBuf,
    project: PathBuf,
}

/// The lock file of `project`: `.NAME.lock` in its folder.
pub fn lock_path(project: &Path) -> PathBuf {
    let name = project.file_name().unwrap_or_default().to_string_lossy();
    project.with_file_name(format!(".{name}.lock"))
}

impl ProjectLock {
    /// Takes the write lock of `project` for this process, described as `holder` to a writer
    /// that finds it taken (e.g. "scarp apply"). Refused, without waiting, while another
    /// process holds it.
    pub fn acquire(project: &Path, holder: &str) -> Result<Self, FileError> {
        let path = lock_path(project);
        loop {
            let mut file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(FileError::io(&path))?;
            // SAFETY: flock on a file descriptor this function owns; no memory is passed.
            let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if locked != 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
                    return Err(FileError::io(&path)(e));
                }
                let mut who = String::new();
                let _ = file.read_to_string(&mut who);
                let who = who.trim();
                let who = if who.is_empty() {
                    "another process"
                } else {
                    who
                };
                return Err(FileError::invalid(
                    project,
                    format!(
                        "open for writing by {who}: close it there first (one writer per project)"
                    ),
                ));
            }
            // The holder before us may have removed the file between our open and our lock:
            // then ours is not the lock file any more; take the new one.
            let same = match (file.metadata(), std::fs::metadata(&path)) {
                (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
                _ => false,
            };
            if !same {
                continue;
            }
            let _ = file.set_len(0);
            let _ = file.rewind();
            let _ = writeln!(file, "{holder} (pid {})", std::process::id());
            return Ok(Self {
                file,
                path,
                project: project.to_path_buf(),
            });
        }
    }

    /// The project this lock is for.
    pub fn project(&self) -> &Path {
        &self.project
    }
}

impl Drop for ProjectLock {
    fn drop(&mut self) {
        // Removed while still locked, so a writer that opens it after sees a new file.
        let _ = std::fs::remove_file(&self.path);
        // SAFETY: unlocking the descriptor this lock owns.
        unsafe { libc::flock(self.file.as_raw_fd(), libc::LOCK_UN) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_writer_is_refused_naming_the_first_until_it_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("s.scarp");
        let first = ProjectLock::acquire(&project, "scarp edit").unwrap();
        let e = ProjectLock::acquire(&project, "scarp apply")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(&project.display().to_string()), "{e}");
        assert!(
            e.contains(&format!(
                "open for writing by scarp edit (pid {})",
                std::process::id()
            )),
            "{e}"
        );
        assert_eq!(e.lines().count(), 1);
        drop(first);
        assert!(
            !lock_path(&project).exists(),
            "the lock file goes with the lock"
        );
        let again = ProjectLock::acquire(&project, "scarp apply").unwrap();
        assert_eq!(again.project(), project);
    }
}
