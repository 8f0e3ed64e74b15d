//! The permission bits of a file an apply puts in place: the replaced file's, or those any
//! program's new file gets (0666 minus the umask), never the staged file's.

use std::path::Path;

use cap_std::fs::Dir;

/// The mode a new file gets from any program: 0666 minus the process's umask.
#[cfg(unix)]
pub(super) fn new_file_mode() -> u32 {
    0o666 & !umask()
}

/// The process's umask: from `/proc/self/status` on Linux (4.7 and later), else set and put
/// back, which is safe here because recovery runs before the command starts other threads.
#[cfg(unix)]
fn umask() -> u32 {
    #[cfg(target_os = "linux")]
    if let Some(mask) = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|m| u32::from_str_radix(m.trim(), 8).ok())
        })
    {
        return mask;
    }
    // SAFETY: umask(2) cannot fail; the old value is put back at once.
    unsafe {
        let old = libc::umask(0o022);
        libc::umask(old);
        old as u32
    }
}

/// Gives the staged file `new` (in `txn`) the mode rsbuilder's rule gives the file it becomes
/// at `target`: the replaced file's permission bits, or [`new_file_mode`] for a new file.
/// Whatever mode the staged file carries is not used.
pub(super) fn set_mode(
    dir: &Dir,
    txn: &Dir,
    new: &str,
    target: &Path,
    replaces: bool,
) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use cap_std::fs::PermissionsExt as _;
        let current = match dir.symlink_metadata(target) {
            Ok(meta) if replaces && meta.is_file() => {
                use cap_std::fs::MetadataExt as _;
                Some(meta.mode() & 0o777)
            }
            _ => None,
        };
        let mode = current.unwrap_or_else(new_file_mode);
        txn.set_permissions(new, cap_std::fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = (dir, txn, new, target, replaces);
        Ok(())
    }
}
