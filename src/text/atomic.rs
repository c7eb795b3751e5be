//! Atomic file writes: a file is written under a temporary name in its own
//! directory and renamed into place, so a failed write (a full disk) never
//! leaves a half-written file in place of a good one. A symbolic link is
//! written through (the file it names is replaced, the link stays), and what
//! is not a regular file (`/dev/null`, a named pipe, a terminal) is written
//! to directly: renaming onto it would replace the device or pipe with a
//! file. Knows nothing of formats.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Writes a file through a temporary file in the same directory and a rename, so
/// a failed write (a full disk) never leaves a half-written file in place of a good one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = AtomicFile::create(path)?;
    file.write_all(bytes)?;
    file.commit()
}

/// A file written under a temporary name and renamed into place by
/// [`AtomicFile::commit`]; dropped without a commit, it leaves nothing behind.
/// (Written directly when the path is not a regular file: see the module.)
pub struct AtomicFile {
    path: PathBuf,
    /// The temporary name, or none when writing to the path directly.
    tmp: Option<PathBuf>,
    file: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Starts writing `path` (its directory must exist).
    pub fn create(path: &Path) -> io::Result<Self> {
        // Follows links: a link to a device or pipe is written through too.
        if let Ok(meta) = std::fs::metadata(path)
            && !meta.is_file()
            && !meta.is_dir()
        {
            return Ok(AtomicFile {
                path: path.to_path_buf(),
                tmp: None,
                file: Some(BufWriter::with_capacity(1 << 16, File::create(path)?)),
            });
        }
        let path = &through_links(path);
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

/// The file `path` names once symbolic links are followed: the path itself
/// when it is no link, else where the links lead (a link to a file not yet
/// there leads to that file).
fn through_links(path: &Path) -> PathBuf {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link {
        return path.to_path_buf();
    }
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    // A dangling link: its target, relative to the link's directory.
    match std::fs::read_link(path) {
        Ok(target) => path
            .parent()
            .map_or(target.clone(), |dir| dir.join(&target)),
        Err(_) => path.to_path_buf(),
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
    fn a_link_is_written_through_and_stays_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let (real, link, dangling) = (
            dir.path().join("real.json"),
            dir.path().join("link.json"),
            dir.path().join("dangling.json"),
        );
        std::fs::write(&real, b"old").unwrap();
        std::os::unix::fs::symlink("real.json", &link).unwrap();
        std::os::unix::fs::symlink("later.json", &dangling).unwrap();
        write_atomic(&link, b"new").unwrap();
        write_atomic(&dangling, b"made").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        assert!(
            std::fs::symlink_metadata(&dangling)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read(dir.path().join("later.json")).unwrap(),
            b"made"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_named_pipe_is_written_to_not_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let pipe = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&pipe).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("skipped: no mkfifo");
            return;
        }
        let reader = {
            let pipe = pipe.clone();
            std::thread::spawn(move || std::fs::read(pipe).unwrap())
        };
        write_atomic(&pipe, b"through the pipe").unwrap();
        assert!(std::fs::metadata(&pipe).unwrap().file_type().is_fifo());
        assert_eq!(reader.join().unwrap(), b"through the pipe");
    }
}
