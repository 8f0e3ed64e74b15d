//! The `rsbuilder` binary: parses arguments, calls the library, prints the error chain and
//! sets the exit code (0 success, 1 user error or drift, 2 usage error).

use clap::Parser;
use rsbuilder::cli::{self, Cli};

/// mimalloc instead of the system allocator: deriving a CRD is mostly small allocations and
/// frees (schemars and kube-core clone schema trees), a third of a run's instructions with
/// glibc's malloc. See docs/benchmarks.md.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    keep_freed_memory();
    restore_sigpipe();
    let cli = Cli::parse();
    let code = match cli::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err}");
            for cause in err.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            match err.downcast_ref::<rsbuilder::scaffold::ScaffoldError>() {
                Some(rsbuilder::scaffold::ScaffoldError::Locked { .. }) => cli::EXIT_LOCKED,
                Some(rsbuilder::scaffold::ScaffoldError::LockTimeout { .. }) => cli::EXIT_USAGE,
                _ => cli::EXIT_FAILURE,
            }
        }
    };
    std::process::exit(code);
}

/// mimalloc's `purge_delay` option (`mi_option_purge_delay` in mimalloc.h, v2 and v3 alike).
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

unsafe extern "C" {
    /// mimalloc.h: `void mi_option_set(mi_option_t option, long value)`; linked with the
    /// allocator (libmimalloc-sys builds the whole C library).
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}

/// Turns off mimalloc's purging (`-1`: memory a run frees stays mapped for its next
/// allocations). With purging, freed pages are handed back to the kernel and faulted in
/// again (with transparent huge pages, 2 MiB zeroed per fault): 11,000-17,000 page faults
/// instead of about 550 for a 100k-line source, most of the system time of
/// `rsbuilder manifests` (docs/benchmarks.md). A run is short, so keeping freed memory costs
/// no more than its peak.
fn keep_freed_memory() {
    // SAFETY: mi_option_set only stores the option's value; any value of purge_delay is valid
    // and it is read when mimalloc next considers purging.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, -1) }
}

/// Rust ignores SIGPIPE, so a write to a closed pipe (`rsbuilder manifests | head -1`, a parent
/// that closed our stdout or stderr) returns `BrokenPipe` and `println!` panics with exit 101.
/// Restoring the default action ends the process quietly instead, as `cat`, `ls` and
/// ripgrep end: killed by SIGPIPE, nothing printed. Files are written before anything is
/// printed, so an early end loses only output nobody reads.
#[cfg(unix)]
fn restore_sigpipe() {
    // SAFETY: called first thing in main, before any thread exists; SIG_DFL is a valid action
    // for SIGPIPE and no handler of ours is replaced.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Windows has no SIGPIPE; a closed pipe there is an error like any other.
#[cfg(not(unix))]
fn restore_sigpipe() {}
