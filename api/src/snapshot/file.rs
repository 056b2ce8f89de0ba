//! Reading one snapshot file safely: only regular files (symbolic links followed), at most
//! [`MAX_FILE_BYTES`], UTF-8. A FIFO, a device (`/dev/zero`), a socket or a directory is
//! refused before it is opened, so reading never blocks and never grows without bound.

use std::fs::{File, FileType, Metadata};
use std::io::Read as _;
use std::path::Path;

use super::SnapshotError;

/// The largest snapshot file read: 512 MiB (a 20,000-node `nodes.yaml` is 50 to 100 MB).
pub const MAX_FILE_BYTES: u64 = 512 * 1024 * 1024;

/// Whether `path` names a directory entry at all (a dangling symbolic link counts: reading
/// it then fails with a clear error instead of the file being taken as absent).
pub fn entry_exists(path: &Path) -> bool {
    path.symlink_metadata().is_ok()
}

/// The text of `path`, checked as described in the module documentation.
pub fn read_text(path: &Path) -> Result<String, SnapshotError> {
    let read_error = |error: std::io::Error| SnapshotError::Read {
        path: path.to_path_buf(),
        error,
    };
    let meta = std::fs::metadata(path).map_err(|error| {
        match (error.kind(), std::fs::read_link(path)) {
            (std::io::ErrorKind::NotFound, Ok(target)) => SnapshotError::DanglingLink {
                path: path.to_path_buf(),
                target,
            },
            _ => read_error(error),
        }
    })?;
    check_regular(path, &meta)?;
    let file = File::open(path).map_err(read_error)?;
    // The entry may have been replaced between the two calls: check what was opened.
    check_regular(path, &file.metadata().map_err(read_error)?)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(path));
    }
    String::from_utf8(bytes).map_err(|e| SnapshotError::NotUtf8 {
        path: path.to_path_buf(),
        offset: e.utf8_error().valid_up_to(),
    })
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
