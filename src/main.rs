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
    let cli = Cli::parse();
    let code = match cli::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err}");
            for cause in err.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            cli::EXIT_FAILURE
        }
    };
    std::process::exit(code);
}
