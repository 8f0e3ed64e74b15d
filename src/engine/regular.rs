//! Reading a file only when it is a regular file of bounded size. A FIFO at a path rsbuilder
//! reads (`PROJECT`, `Cargo.toml`, a source file, a CRD) would make a plain open wait forever
//! for a writer, while the command holds the project lock; a device such as `/dev/zero` would
//! be read without end. So every read opens without blocking (`O_NONBLOCK`, which changes
//! nothing for a regular file), checks the opened file's type, and reads at most [`LIMIT`]
//! bytes.

use std::io::Read as _;
use std::path::Path;

use cap_std::fs::Dir;

/// The largest file rsbuilder reads: far above any source, manifest or CRD it expects.
pub const LIMIT: u64 = 256 << 20;

/// The largest `Cargo.toml` rsbuilder reads (1 MiB). Parsing TOML takes some 65 to 125 times
/// the file's size in memory (a 29 MB manifest took 3.6 GiB in `create api`); real manifests,
/// large workspaces' included, stay below 100 KiB.
pub const CARGO_TOML_LIMIT: u64 = 1 << 20;

/// The bound for the file at `path`: [`CARGO_TOML_LIMIT`] for a `Cargo.toml`, else [`LIMIT`].
fn limit_for(path: &Path) -> u64 {
    match path.file_name().and_then(|n| n.to_str()) {
        Some("Cargo.toml") => CARGO_TOML_LIMIT,
        _ => LIMIT,
    }
}

/// The error of a path that is not a regular file, or is too large.
fn refuse(what: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, what.to_string())
}

const NOT_REGULAR: &str = "not a regular file (a FIFO, a device, a socket or a directory); rsbuilder reads only regular files";

/// The bytes of an opened file, if it is a regular file of at most `limit` bytes.
fn read_opened_at_most(
    mut file: impl std::io::Read,
    is_file: bool,
    limit: u64,
) -> std::io::Result<Vec<u8>> {
    if !is_file {
        return Err(refuse(NOT_REGULAR));
    }
    let mut bytes = Vec::new();
    (&mut file).take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(refuse(&too_large(limit)));
    }
    Ok(bytes)
}

fn too_large(limit: u64) -> String {
    if limit >= 1 << 20 && limit.is_multiple_of(1 << 20) {
        format!("larger than {} MiB, more than rsbuilder reads", limit >> 20)
    } else if limit >= 1 << 10 && limit.is_multiple_of(1 << 10) {
        format!(
            "larger than {} KiB, more than rsbuilder reads here",
            limit >> 10
        )
    } else {
        format!("larger than {limit} bytes, more than rsbuilder reads here")
    }
}

fn utf8(bytes: Vec<u8>) -> std::io::Result<String> {
    String::from_utf8(bytes).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// The text of the file at `path` (links followed), refused unless it is a regular file of at
/// most [`LIMIT`] bytes ([`CARGO_TOML_LIMIT`] for a `Cargo.toml`); never blocks on a FIFO.
///
/// Errors: the open's or read's error; `InvalidInput` for a FIFO, device, socket, directory or
/// a file over the limit; `InvalidData` for text that is not UTF-8.
pub fn read_path(path: &Path) -> std::io::Result<String> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path)?;
    let is_file = file.metadata()?.is_file();
    utf8(read_opened_at_most(file, is_file, limit_for(path))?)
}

/// [`read_path`] with the bound `limit` (at most [`LIMIT`]) instead of [`LIMIT`]. The size
/// the file system reports is looked at first, so a larger file (a sparse one, say, that
/// costs nothing on the disk) is refused without reading any of it; the read itself stops
/// after `limit` bytes too, should the file grow meanwhile.
///
/// Errors: [`read_path`]'s, with `limit` as the bound.
pub fn read_path_at_most(path: &Path, limit: u64) -> std::io::Result<String> {
    let limit = limit.min(LIMIT);
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if meta.is_file() && meta.len() > limit {
        return Err(refuse(&too_large(limit)));
    }
    utf8(read_opened_at_most(file, meta.is_file(), limit)?)
}

/// [`read_path`] for `rel` below the rooted handle `dir` (resolved beneath it, as every
/// engine read is).
pub fn read_in(dir: &Dir, rel: &Path) -> std::io::Result<String> {
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    cap_std::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = dir.open_with(rel, &options)?;
    let is_file = file.metadata()?.is_file();
    utf8(read_opened_at_most(file, is_file, limit_for(rel))?)
}

/// [`read_in`] with the bound `limit` (at most [`LIMIT`]): a file the file system says is
/// larger is refused before any of it is read.
///
/// Errors: [`read_in`]'s, with `limit` as the bound.
pub fn read_in_at_most(dir: &Dir, rel: &Path, limit: u64) -> std::io::Result<String> {
    let limit = limit.min(LIMIT);
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    cap_std::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = dir.open_with(rel, &options)?;
    let meta = file.metadata()?;
    if meta.is_file() && meta.len() > limit {
        return Err(refuse(&too_large(limit)));
    }
    utf8(read_opened_at_most(file, meta.is_file(), limit)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A FIFO is refused at once (a plain read waits for a writer forever); a device is
    /// refused, not read without end; a regular file is read.
    #[cfg(unix)]
    #[test]
    fn only_regular_files_are_read() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("PROJECT");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path and mode.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let err = read_path(&fifo).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        let dir = Dir::open_ambient_dir(tmp.path(), cap_std::ambient_authority()).unwrap();
        let err = read_in(&dir, Path::new("PROJECT")).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        let err = read_path(Path::new("/dev/zero")).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        std::fs::write(tmp.path().join("a"), "text").unwrap();
        assert_eq!(read_in(&dir, Path::new("a")).unwrap(), "text");
        assert_eq!(read_path(&tmp.path().join("a")).unwrap(), "text");
    }

    /// A `Cargo.toml` over 1 MiB is refused by both reads, naming the limit; one at the limit
    /// is read. Before, a 29 MB manifest was parsed in 3.6 GiB.
    #[test]
    fn a_cargo_toml_over_a_mebibyte_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open_ambient_dir(tmp.path(), cap_std::ambient_authority()).unwrap();
        let at_limit = "#".repeat(CARGO_TOML_LIMIT as usize);
        std::fs::write(tmp.path().join("Cargo.toml"), &at_limit).unwrap();
        assert_eq!(
            read_in(&dir, Path::new("Cargo.toml")).unwrap().len(),
            at_limit.len()
        );
        std::fs::write(tmp.path().join("Cargo.toml"), format!("{at_limit}#")).unwrap();
        let err = read_in(&dir, Path::new("Cargo.toml")).unwrap_err();
        assert!(err.to_string().contains("larger than 1 MiB"), "{err}");
        let err = read_path(&tmp.path().join("Cargo.toml")).unwrap_err();
        assert!(err.to_string().contains("larger than 1 MiB"), "{err}");
        // Another file of that size is read.
        std::fs::write(tmp.path().join("big.rs"), format!("{at_limit}#")).unwrap();
        assert!(read_in(&dir, Path::new("big.rs")).is_ok());
    }
}
