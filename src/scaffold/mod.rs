//! Scaffolding: the engine that plans and applies file changes ([`engine`]), and the commands
//! that fill a plan from templates (`init`, `create api`, `create webhook`).

pub mod api;
pub mod edit;
pub mod engine;
pub mod init;
pub mod marker;
pub mod relicense;
pub mod runtime;
pub mod rustfmt;
pub mod webhook;

pub use engine::{Action, FileOp, IfExists, Plan, Resolved, ScaffoldError};

/// Prints what a plan did, one line per file, in Kubebuilder's style (`create  config/...`).
/// Unchanged files are not listed, nor rsbuilder's own records under `.rsbuilder/`.
pub fn report(resolved: &[Resolved]) -> String {
    let mut out = String::new();
    for r in resolved
        .iter()
        .filter(|r| r.action != Action::Unchanged && !r.path.starts_with(engine::STATE_DIR))
    {
        out.push_str(&format!(
            "{:<7} {}\n",
            r.action.to_string(),
            r.path.display()
        ));
    }
    out
}
