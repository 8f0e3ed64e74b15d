//! The fault-injection hook: the engine calls [`step`] right before each change it makes to
//! the file system (a directory created, a file staged, linked, renamed or removed). In debug
//! builds (`cfg(debug_assertions)`, which is what `cargo test` builds), the environment variable
//! `RSBUILDER_FAULT_AT=<n>` makes the process kill itself with SIGKILL at the n-th step, before
//! doing it: no destructor, no rollback runs, exactly as if the machine had killed it. The
//! crash tests (`tests/crash.rs`) run each command with n = 1, 2, … until it completes, and
//! check after each kill that the next command finds the project as before or as after.
//!
//! Release builds compile [`step`] to nothing and never read the variable.

/// Marks one write step; see the module documentation.
#[inline]
pub(crate) fn step() {
    #[cfg(debug_assertions)]
    debug::step();
}

#[cfg(debug_assertions)]
mod debug {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static STEPS: AtomicUsize = AtomicUsize::new(0);
    static FAULT_AT: OnceLock<Option<usize>> = OnceLock::new();

    pub(super) fn step() {
        let at = *FAULT_AT.get_or_init(|| {
            std::env::var("RSBUILDER_FAULT_AT")
                .ok()
                .and_then(|v| v.trim().parse().ok())
        });
        let n = STEPS.fetch_add(1, Ordering::SeqCst) + 1;
        if at == Some(n) {
            die();
        }
    }

    #[cfg(unix)]
    fn die() -> ! {
        // SAFETY: kill(2) on our own pid with a valid signal number; SIGKILL cannot be caught.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
        std::process::abort()
    }

    #[cfg(not(unix))]
    fn die() -> ! {
        std::process::abort()
    }
}
