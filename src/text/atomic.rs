//! Atomic file writes: a file is written under a temporary name in its own
//! directory and renamed into place, so a failed write (a full disk) never
//! leaves a half-written file in place of a good one. Symbolic links are
//! written through (the file the last one names is replaced, every link
//! stays). What is not a regular file (`/dev/null`, a named pipe, a
//! terminal) is written to directly, and so is a descriptor the process
//! holds (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`), appended to as
//! the descriptor itself would be: renaming onto it would replace the device,
//! the pipe, or the file a shell redirected the output to. Such a target gets
//! what was written before a failure. Knows nothing of formats.

use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Component, Path, PathBuf};

/// Writes a file through a temporary file in the same directory and a rename
/// (or directly, where the module says), so a failed write (a full disk)
/// never leaves a half-written file in place of a good one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = AtomicFile::create(path)?;
    file.write_all(bytes)?;
    file.commit()
}

/// A file written under a temporary name and renamed into place by
/// [`AtomicFile::commit`]; dropped without a commit, it leaves nothing behind.
/// (Written directly where the module says.)
pub struct AtomicFile {
    path: PathBuf,
    /// The temporary name, or none when writing to the path directly.
    tmp: Option<PathBuf>,
    file: Option<BufWriter<File>>,
}

/// Where the bytes for an output path go.
enum Target {
    /// The path itself, opened for writing (appending, for a descriptor).
    Direct { append: bool },
    /// A temporary file renamed onto this path (the path once links are followed).
    Replace(PathBuf),
}

/// Most links followed from one path, as Linux's `ELOOP` limit.
const MAX_LINKS: usize = 40;

/// Where writing `path` goes, following its links one by one.
fn target(path: &Path) -> io::Result<Target> {
    let mut at = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        if is_descriptor(&at) {
            return Ok(Target::Direct { append: true });
        }
        let Ok(meta) = std::fs::symlink_metadata(&at) else {
            return Ok(Target::Replace(at));
        };
        if meta.file_type().is_symlink() {
            let next = std::fs::read_link(&at)?;
            at = match at.parent() {
                Some(dir) if next.is_relative() => dir.join(next),
                _ => next,
            };
        } else if meta.is_file() || meta.is_dir() {
            return Ok(Target::Replace(at));
        } else {
            return Ok(Target::Direct { append: false });
        }
    }
    Err(io::Error::other(format!(
        "more than {MAX_LINKS} symbolic links from {} (a loop?)",
        path.display()
    )))
}

/// Whether `path` names a descriptor of the process: `/dev/stdout`,
/// `/dev/stderr`, `/dev/fd/N` or `/proc/PID/fd/N`.
fn is_descriptor(path: &Path) -> bool {
    let mut components = path.components();
    if components.next() != Some(Component::RootDir) {
        return false;
    }
    let names: Vec<&OsStr> = components.map(|c| c.as_os_str()).collect();
    match names.as_slice() {
        [dev, name] => *dev == "dev" && (*name == "stdout" || *name == "stderr"),
        [dev, fd, _] => *dev == "dev" && *fd == "fd",
        [proc, _, fd, _] => *proc == "proc" && *fd == "fd",
        _ => false,
    }
}

impl AtomicFile {
    /// Starts writing `path` (its directory must exist).
    pub fn create(path: &Path) -> io::Result<Self> {
        let path = match target(path)? {
            Target::Direct { append } => {
                let file = OpenOptions::new().write(true).append(append).open(path)?;
                return Ok(AtomicFile {
                    path: path.to_path_buf(),
                    tmp: None,
                    file: Some(BufWriter::with_capacity(1 << 16, file)),
                });
            }
            Target::Replace(real) => real,
        };
        let path = path.as_path();
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let name = path.file_name().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "output path has no file name")
        })?;
        let tmp = dir.join(format!(
            ".{}.rlctl-{}.tmp",
            name.to_string_lossy(),
            std::process::id()
        ));
        let file = File::create(&tmp)?;
        Ok(AtomicFile {
            path: path.to_path_buf(),
            tmp: Some(tmp),
            file: Some(BufWriter::with_capacity(1 << 16, file)),
        })
    }

    /// Flushes, syncs and renames the file into place (flushes only, when
    /// writing directly: a pipe or device cannot be synced).
    pub fn commit(mut self) -> io::Result<()> {
        let file = self.file.take().expect("committed once");
        let file = file.into_inner().map_err(|e| e.into_error())?;
        match &self.tmp {
            Some(tmp) => {
                file.sync_all()?;
                std::fs::rename(tmp, &self.path)
            }
            None => Ok(()),
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.as_mut().expect("not committed").write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().expect("not committed").flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // After a commit the temporary name is gone and this does nothing.
        if let Some(tmp) = &self.tmp {
            let _ = std::fs::remove_file(tmp);
        }
        // Written directly and not committed: what is still buffered is not
        // sent (a `BufWriter` dropped as it is would flush it).
        if let Some(file) = self.file.take() {
            drop(file.into_parts());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        assert!(write_atomic(&dir.path().join("missing/out.json"), b"x").is_err());
    }

    #[cfg(unix)]
    #[test]
    fn links_are_written_through_one_by_one_and_stay_links() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name);
        std::fs::create_dir(at("sub")).unwrap();
        std::fs::write(at("real.json"), b"old").unwrap();
        symlink("real.json", at("link.json")).unwrap();
        // A chain whose end is not there yet, each target relative to its link.
        symlink("sub/l2", at("l1")).unwrap();
        symlink("later.json", at("sub/l2")).unwrap();
        write_atomic(&at("link.json"), b"new").unwrap();
        write_atomic(&at("l1"), b"made").unwrap();
        let is_link =
            |name: &str| (std::fs::symlink_metadata(at(name)).unwrap().file_type()).is_symlink();
        assert!(is_link("link.json") && is_link("l1") && is_link("sub/l2"));
        assert_eq!(std::fs::read(at("real.json")).unwrap(), b"new");
        assert_eq!(std::fs::read(at("sub/later.json")).unwrap(), b"made");
        // A loop is an error, not a file put in place of a link.
        symlink("b", at("a")).unwrap();
        symlink("a", at("b")).unwrap();
        assert!(
            write_atomic(&at("a"), b"x")
                .unwrap_err()
                .to_string()
                .contains("a loop?")
        );
        assert!(is_link("a") && is_link("b"));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_descriptor_of_the_process_is_appended_to_not_replaced() {
        use std::os::unix::fs::MetadataExt;
        use std::os::unix::io::AsRawFd;
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.txt");
        std::fs::write(&out, b"report\n").unwrap();
        // As a shell's `>> out.txt` holds it.
        let held = OpenOptions::new().append(true).open(&out).unwrap();
        let inode = std::fs::metadata(&out).unwrap().ino();
        for name in [
            format!("/proc/self/fd/{}", held.as_raw_fd()),
            format!("/dev/fd/{}", held.as_raw_fd()),
        ] {
            write_atomic(Path::new(&name), b"rows\n").unwrap();
        }
        assert_eq!(std::fs::read(&out).unwrap(), b"report\nrows\nrows\n");
        assert_eq!(std::fs::metadata(&out).unwrap().ino(), inode);
        assert!(
            is_descriptor(Path::new("/dev/stdout")) && !is_descriptor(Path::new("x/dev/stdout"))
        );
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn a_named_pipe_is_written_to_not_replaced() {
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let pipe = dir.path().join("pipe");
        let name = std::ffi::CString::new(pipe.as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path; mkfifo only creates the pipe.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let reader = {
            let pipe = pipe.clone();
            std::thread::spawn(move || std::fs::read(pipe).unwrap())
        };
        write_atomic(&pipe, b"through the pipe").unwrap();
        assert!(std::fs::metadata(&pipe).unwrap().file_type().is_fifo());
        assert_eq!(reader.join().unwrap(), b"through the pipe");
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn a_direct_write_dropped_uncommitted_sends_nothing_buffered() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.txt");
        let held = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&out)
            .unwrap();
        let name = format!("/dev/fd/{}", std::os::unix::io::AsRawFd::as_raw_fd(&held));
        let mut file = AtomicFile::create(Path::new(&name)).unwrap();
        file.write_all(b"half").unwrap();
        drop(file);
        assert_eq!(std::fs::read(&out).unwrap(), b"");
    }
}
