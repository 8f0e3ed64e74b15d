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
                _ => cli::EXIT_FAILURE,
            }
        }
    };
    std::process::exit(code);
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
