//! Reading one snapshot file safely: only regular files (symbolic links followed, within the
//! folder read: [`Root`]), at most [`MAX_FILE_BYTES`], UTF-8. A FIFO, a device (`/dev/zero`),
//! a socket or a directory is refused before anything is read, so reading never blocks and
//! never grows without bound. [`read_now`] reads the instant of a `now` file this way.
//!
//! The file is opened first (non-blocking, so opening a FIFO returns at once instead of
//! waiting for a writer), and what was opened is checked: no check of the path can be
//! outdated by the time of the open (an entry swapped for a FIFO in between).

use std::fs::{File, FileType, Metadata};
use std::io::Read;
use std::path::{Path, PathBuf};

use jiff::Timestamp;

use crate::error::SnapshotError;
use crate::excerpt;

/// The largest snapshot file read: 512 MiB (a 20,000-node `nodes.yaml` is 50 to 100 MB).
pub const MAX_FILE_BYTES: u64 = 512 * 1024 * 1024;

/// Whether `path` names a directory entry at all (a dangling symbolic link counts: reading
/// it then fails with a clear error instead of the file being taken as absent).
pub fn entry_exists(path: &Path) -> bool {
    path.symlink_metadata().is_ok()
}

/// The folder a snapshot is read from, as given (the paths shown) and resolved (where links
/// may lead). A must-gather comes from elsewhere and may hold symbolic links to the analyst's
/// own files (`now -> ~/.kube/config`): a path is read only when, links followed, it stays
/// inside the folder.
#[derive(Debug, Clone)]
pub struct Root {
    given: PathBuf,
    resolved: PathBuf,
}

impl Root {
    /// The folder `dir` (which may itself be a link).
    pub fn new(dir: &Path) -> Result<Self, SnapshotError> {
        let resolved = std::fs::canonicalize(dir).map_err(|error| SnapshotError::Read {
            path: dir.to_path_buf(),
            error,
        })?;
        Ok(Root {
            given: dir.to_path_buf(),
            resolved,
        })
    }

    /// The folder as given.
    pub fn given(&self) -> &Path {
        &self.given
    }

    /// Where `path` leads when that is outside the folder (through a symbolic link in any of
    /// its components); `None` when it stays inside, or cannot be resolved (a dangling link or
    /// a loop: reading it then fails with its own error).
    pub fn outside(&self, path: &Path) -> Option<PathBuf> {
        std::fs::canonicalize(path)
            .ok()
            .filter(|target| !target.starts_with(&self.resolved))
    }

    /// `Ok` when `path` stays inside the folder, else the error naming where it leads.
    pub fn check(&self, path: &Path) -> Result<(), SnapshotError> {
        match self.outside(path) {
            None => Ok(()),
            Some(target) => Err(SnapshotError::OutsideFolder {
                path: path.to_path_buf(),
                target,
            }),
        }
    }
}

/// Most bytes of a file read by [`read_short`].
pub const MAX_SHORT_FILE_BYTES: u64 = 4096;

/// The text of a file that holds one short value (the `now` file): like [`read_text`], but a
/// file larger than [`MAX_SHORT_FILE_BYTES`] is refused without being read whole (its size
/// said, nothing of its content).
pub fn read_short(path: &Path) -> Result<String, SnapshotError> {
    let (file, len) = open(path)?;
    if len > MAX_SHORT_FILE_BYTES {
        return Err(SnapshotError::TooLong {
            path: path.to_path_buf(),
            len,
            limit: MAX_SHORT_FILE_BYTES,
        });
    }
    let mut bytes = Vec::new();
    file.take(MAX_SHORT_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| SnapshotError::Read {
            path: path.to_path_buf(),
            error,
        })?;
    if bytes.len() as u64 > MAX_SHORT_FILE_BYTES {
        return Err(SnapshotError::TooLong {
            path: path.to_path_buf(),
            len: bytes.len() as u64,
            limit: MAX_SHORT_FILE_BYTES,
        });
    }
    String::from_utf8(bytes).map_err(|e| SnapshotError::NotUtf8 {
        path: path.to_path_buf(),
        offset: e.utf8_error().valid_up_to(),
    })
}

/// The instant a `now` file holds (a short file: [`read_short`]); an error quotes at most an
/// excerpt of it.
pub fn read_now(path: &Path) -> Result<Timestamp, SnapshotError> {
    let text = read_short(path)?;
    let value = text.trim();
    value
        .parse::<Timestamp>()
        .map_err(|_| SnapshotError::BadNow {
            path: path.to_path_buf(),
            value: excerpt::quoted(value),
        })
}

/// The text of `path`, checked as described in the module documentation.
pub fn read_text(path: &Path) -> Result<String, SnapshotError> {
    let (file, len) = open(path)?;
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| SnapshotError::Read {
            path: path.to_path_buf(),
            error,
        })?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(path));
    }
    String::from_utf8(bytes).map_err(|e| SnapshotError::NotUtf8 {
        path: path.to_path_buf(),
        offset: e.utf8_error().valid_up_to(),
    })
}

/// `path` opened for reading once checked (a regular file within the size cap), with its
/// length when opened.
pub fn open(path: &Path) -> Result<(File, u64), SnapshotError> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let read_error = |error: std::io::Error| SnapshotError::Read {
        path: path.to_path_buf(),
        error,
    };
    // O_NONBLOCK: opening a FIFO does not wait for a writer (and reading a regular file is not
    // affected); O_NOCTTY: a terminal device never becomes ours.
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path);
    let file = match opened {
        Ok(f) => f,
        Err(error) => {
            return Err(match (error.kind(), std::fs::read_link(path)) {
                (std::io::ErrorKind::NotFound, Ok(target)) => SnapshotError::DanglingLink {
                    path: path.to_path_buf(),
                    target,
                },
                // A socket cannot be opened at all: say what it is.
                _ => match std::fs::metadata(path) {
                    Ok(meta) if !meta.is_file() => SnapshotError::NotRegular {
                        path: path.to_path_buf(),
                        what: describe(meta.file_type()),
                    },
                    _ => read_error(error),
                },
            });
        }
    };
    // What was opened, not what the path named a moment before.
    let meta = file.metadata().map_err(read_error)?;
    check_regular(path, &meta)?;
    Ok((file, meta.len()))
}

/// A reader that passes the bytes of `inner` through and fails (an I/O error) as soon as they
/// are not UTF-8 or exceed [`MAX_FILE_BYTES`]: what [`read_text`] accepts, checked as the
/// bytes stream by (for a parser reading a large file without holding its text). A failure
/// says only that [`read_text`] would refuse the file; it gives the error.
pub struct Checked<R> {
    inner: R,
    /// The start of a character cut at the end of the last read.
    partial: [u8; 4],
    partial_len: usize,
    total: u64,
}

impl<R: Read> Checked<R> {
    pub fn new(inner: R) -> Self {
        Checked {
            inner,
            partial: [0; 4],
            partial_len: 0,
            total: 0,
        }
    }
}

/// The length of the UTF-8 sequence a byte starts (0: not a first byte).
fn sequence_len(first: u8) -> usize {
    match first {
        0x00..=0x7F => 1,
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => 0,
    }
}

impl<R: Read> Read for Checked<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let invalid = || std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8");
        if buf.is_empty() {
            // Not the end of the text: nothing asked, nothing read.
            return Ok(0);
        }
        let n = self.inner.read(buf)?;
        self.total += n as u64;
        if self.total > MAX_FILE_BYTES {
            return Err(std::io::Error::other("too large"));
        }
        let read = buf.get(..n).unwrap_or_default();
        if n == 0 && self.partial_len > 0 {
            return Err(invalid());
        }
        let mut rest = read;
        if self.partial_len > 0 {
            // Complete the character cut by the last read.
            let first = self.partial.first().copied().unwrap_or_default();
            let missing = sequence_len(first).saturating_sub(self.partial_len);
            let take = missing.min(rest.len());
            let (head, tail) = rest.split_at(take);
            for (slot, &b) in self.partial.iter_mut().skip(self.partial_len).zip(head) {
                *slot = b;
            }
            self.partial_len += take;
            rest = tail;
            if take == missing {
                let whole = self.partial.get(..self.partial_len).unwrap_or_default();
                std::str::from_utf8(whole).map_err(|_| invalid())?;
                self.partial_len = 0;
            }
        }
        if let Err(e) = std::str::from_utf8(rest) {
            // Only a character cut at the end of the read may wait for the next one.
            let cut = rest.get(e.valid_up_to()..).unwrap_or_default();
            if e.error_len().is_some() || cut.len() >= 4 {
                return Err(invalid());
            }
            self.partial_len = cut.len();
            for (slot, &b) in self.partial.iter_mut().zip(cut) {
                *slot = b;
            }
        }
        Ok(n)
    }
}

fn too_large(path: &Path) -> SnapshotError {
    SnapshotError::TooLarge {
        path: path.to_path_buf(),
        limit_mib: MAX_FILE_BYTES / (1024 * 1024),
    }
}

/// A regular file within the size cap, else the error naming what it is.
fn check_regular(path: &Path, meta: &Metadata) -> Result<(), SnapshotError> {
    if !meta.is_file() {
        return Err(SnapshotError::NotRegular {
            path: path.to_path_buf(),
            what: describe(meta.file_type()),
        });
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_large(path));
    }
    Ok(())
}

/// What a non-regular file is, in words.
fn describe(t: FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt as _;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    fn temp_dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "update-status-snapshot-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temp dir");
        dir
    }

    fn mkfifo(path: &Path) {
        let status = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .expect("running mkfifo");
        assert!(status.success(), "mkfifo {}", path.display());
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = temp_dir("fifo");
        let fifo = dir.join("nodes.yaml");
        mkfifo(&fifo);
        let err = read_text(&fifo).expect_err("a FIFO is refused");
        assert!(err.to_string().contains("a FIFO"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The entry is swapped between a regular file and a FIFO while it is opened again and
    /// again: checking the path and then opening it would, sooner or later, open the FIFO and
    /// wait forever for a writer. Opening first and checking what was opened never blocks.
    #[test]
    fn an_entry_swapped_for_a_fifo_never_blocks_the_open() {
        let dir = temp_dir("swap");
        std::fs::write(dir.join("file"), "kind: List\nitems: []\n").expect("writing");
        mkfifo(&dir.join("fifo"));
        let entry = dir.join("entry.yaml");
        std::os::unix::fs::symlink("file", &entry).expect("symlink");
        let stop = Arc::new(AtomicBool::new(false));
        let swapper = {
            let (dir, stop) = (dir.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let target = if i.is_multiple_of(2) { "fifo" } else { "file" };
                    let tmp = dir.join(format!("tmp-{i}"));
                    if std::os::unix::fs::symlink(target, &tmp).is_ok() {
                        let _ = std::fs::rename(&tmp, dir.join("entry.yaml"));
                    }
                    i += 1;
                }
            })
        };
        let (done_tx, done) = std::sync::mpsc::channel();
        let opener = {
            let entry = entry.clone();
            std::thread::spawn(move || {
                let (mut files, mut refused) = (0u32, 0u32);
                for _ in 0..20_000 {
                    match open(&entry) {
                        Ok(_) => files += 1,
                        Err(SnapshotError::NotRegular { .. }) => refused += 1,
                        Err(_) => {}
                    }
                }
                let _ = done_tx.send((files, refused));
            })
        };
        let result = done.recv_timeout(Duration::from_secs(60));
        stop.store(true, Ordering::Relaxed);
        let _ = swapper.join();
        if result.is_ok() {
            let _ = opener.join();
        }
        // (A blocked opener is left behind: the test process ends without it.)
        let _ = std::fs::remove_dir_all(&dir);
        let (files, refused) = result.expect("every open returned (none blocked on the FIFO)");
        assert!(
            files > 0 && refused > 0,
            "both kinds were met: {files} files, {refused} FIFOs"
        );
    }
}
