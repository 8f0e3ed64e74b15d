//! `rsbuilder alpha update` and `rsbuilder alpha generate`: flags, output, exit codes, and the
//! calls into [`crate::scaffold::alpha`].

use std::path::{Path, PathBuf};

/// `rsbuilder alpha` subcommands (Kubebuilder's `alpha` group: commands whose behaviour may
/// still change).
#[derive(Debug, clap::Subcommand)]
pub enum AlphaCommand {
    /// Bring the tool-owned files (the runtime under rsbuilder-runtime/) to this rsbuilder's
    /// version: untouched files are replaced, files you changed are merged three-way; user-owned
    /// files are never touched. Exit code 1 when a merge leaves conflicts.
    #[command(
        after_help = "Examples:\n  rsbuilder alpha update --dry-run   # list what would change\n  rsbuilder alpha update\n\n\
Conflicts are written as `<<<<<<< ours` / `||||||| original` / `=======` / `>>>>>>> theirs` \
blocks (ours: your file; original: what rsbuilder wrote before; theirs: this version's text)."
    )]
    Update(UpdateArgs),
    /// Scaffold the project again from its PROJECT with this rsbuilder's templates, carrying
    /// your code (types, controllers, webhooks, samples, generated manifests, files rsbuilder
    /// does not write) over; prints what changed.
    #[command(
        after_help = "Examples:\n  rsbuilder alpha generate --output-dir ../ai-operator-new   # a new copy to compare\n  rsbuilder alpha generate                                    # in place: commit first\n\n\
In place, each file the scaffold writes (Cargo.toml, src/main.rs, Makefile, config/...) that you \
changed is merged three ways with this version's (Cargo.toml key by key). When a file cannot \
merge, nothing is written and the files are listed (exit code 1): compare with --output-dir, \
or pass --force to write conflict blocks."
    )]
    Generate(GenerateArgs),
    /// Finish a write that an interrupted rsbuilder command left in the project (rolled
    /// forward or back from its journal), or say there is none. Every command that writes
    /// does this first; this one does only that.
    #[command(after_help = "Example:\n  rsbuilder alpha recover")]
    Recover,
}

/// `rsbuilder alpha update` flags.
#[derive(Debug, clap::Args)]
pub struct UpdateArgs {
    /// Print what would change (and the conflicts a merge would leave) without writing.
    #[arg(long)]
    pub dry_run: bool,
}

/// `rsbuilder alpha generate` flags (Kubebuilder's names).
#[derive(Debug, clap::Args)]
pub struct GenerateArgs {
    /// The project to re-scaffold: the directory holding its PROJECT (default: the project
    /// the current directory is in).
    #[arg(long)]
    pub input_dir: Option<PathBuf>,
    /// Where to write the new project (created when missing; must be empty unless --force).
    /// Without it, the project is re-scaffolded in place.
    #[arg(long)]
    pub output_dir: Option<PathBuf>,
    /// Write into an output directory that is not empty. In place: write the files whose
    /// edits cannot merge with conflict blocks (exit code 1) instead of refusing.
    #[arg(long)]
    pub force: bool,
}

/// Runs an `alpha` subcommand: `cwd` is the current directory, `root` the project found from
/// it.
pub fn run(cwd: &Path, root: &Path, cmd: AlphaCommand) -> anyhow::Result<i32> {
    match cmd {
        AlphaCommand::Update(args) => update(root, args),
        AlphaCommand::Generate(args) => generate(cwd, root, args),
        AlphaCommand::Recover => {
            match crate::engine::recover_project(root)? {
                Some(done) => println!("{done}"),
                None => println!("nothing to finish in {}", root.display()),
            }
            Ok(super::EXIT_OK)
        }
    }
}

/// `alpha update`: prints one line per tool-owned file that changes (`replace`, `create`,
/// `merge`, `conflict`, `remove`, `kept`, `record`), then what happens to `Cargo.lock`
/// ([`print_lock`]) and, in a project on the runtime by version, one `version` line per
/// `rsbuilder-runtime` requirement of Cargo.toml that moves, or that nothing is to do; exit code 1 with the list of conflicts when
/// any remain (a version of the user's kept in `Cargo.lock` is not one).
fn update(root: &Path, args: UpdateArgs) -> anyhow::Result<i32> {
    use crate::scaffold::alpha;
    let _lock = if args.dry_run {
        crate::engine::lock_project_read_only(root)?
    } else {
        crate::engine::lock_project(root)?
    };
    let update = alpha::plan_update(root)?;
    if args.dry_run {
        update.plan.resolve()?;
    } else {
        update.plan.apply()?;
    }
    let version = env!("CARGO_PKG_VERSION");
    let verb = if args.dry_run { "would " } else { "" };
    for (path, outcome) in &update.files {
        match outcome {
            alpha::Outcome::Kept => println!(
                "{:<8} {} (your change; rsbuilder {version} changes nothing there)",
                outcome.label(),
                path.display()
            ),
            _ => println!("{:<8} {}", outcome.label(), path.display()),
        }
    }
    let kept = update
        .files
        .iter()
        .filter(|(_, o)| matches!(o, alpha::Outcome::Kept))
        .count();
    let yours = match kept {
        0 => String::new(),
        n => format!(
            ", apart from your changes in {}, kept",
            crate::scaffold::count(n, "file")
        ),
    };
    if let Some(lock) = &update.lock {
        print_lock(lock, args.dry_run, version);
    }
    for moved in &update.requirements {
        let moves = if args.dry_run { "would move" } else { "moved" };
        println!(
            "{:<8} Cargo.toml: rsbuilder-runtime in [{}] {moves} from \"{}\" to \"{version}\"",
            "version", moved.table, moved.from
        );
    }
    if update.copies_removed > 0 {
        println!(
            "{:<8} .rsbuilder/base/ ({} an older rsbuilder kept; rsbuilder {version} carries the merge bases)",
            "remove",
            crate::scaffold::count(update.copies_removed, "file")
        );
    }
    if update.files.len() == kept
        && update.lock.is_none()
        && update.copies_removed == 0
        && update.requirements.is_empty()
    {
        println!(
            "The {} are those of rsbuilder {version}{yours}; nothing to do.",
            crate::scaffold::count(update.tool_owned, "tool-owned file")
        );
        return Ok(super::EXIT_OK);
    }
    let conflicts = update.conflicts();
    if conflicts.is_empty() && update.tool_owned == 0 {
        println!(
            "\nThe project {verb}now depends on rsbuilder-runtime {version}. Next: cargo build && cargo test"
        );
        return Ok(super::EXIT_OK);
    }
    if conflicts.is_empty() {
        println!(
            "\nThe tool-owned files {verb}now match rsbuilder {version}{yours}. Next: cargo build && cargo test"
        );
        return Ok(super::EXIT_OK);
    }
    let need = match (args.dry_run, conflicts.len()) {
        (true, _) => "would need",
        (false, 1) => "needs",
        (false, _) => "need",
    };
    eprintln!(
        "error: {} {need} your attention:",
        crate::scaffold::count(conflicts.len(), "tool-owned file")
    );
    for (path, outcome) in update.files.iter().filter(|(_, o)| o.is_conflict()) {
        let why = match outcome {
            alpha::Outcome::KeptDropped => {
                "rsbuilder no longer has this file, and you changed it: kept as yours; delete it if you do not need it"
            }
            alpha::Outcome::StillConflicted => {
                "still holds the conflict markers of an earlier update: resolve them first"
            }
            _ => "your change and this version's overlap: resolve the conflict blocks",
        };
        eprintln!("  {}: {why}", path.display());
    }
    eprintln!(
        "  help: a conflict block is `<<<<<<< ours` (your text), `||||||| original` (what rsbuilder \
         wrote before), `=======`, then this version's text up to `>>>>>>> theirs`; keep what you \
         need, delete the markers, then run `rsbuilder alpha update` again"
    );
    Ok(super::EXIT_FAILURE)
}

/// The `Cargo.lock` lines of `alpha update`: the packages moved to this version's pins, the
/// pins added, and each version the user chose that stays, with the command that is theirs
/// to run; a note when the project has no record of the pins rsbuilder wrote before.
fn print_lock(lock: &crate::scaffold::alpha::LockUpdate, dry_run: bool, version: &str) {
    use crate::scaffold::alpha::LockUpdate;
    use crate::scaffold::count;
    use crate::scaffold::lockfile::{FILE, PINNED};
    let lock = match lock {
        LockUpdate::Created => {
            println!(
                "{:<8} {FILE} (the versions rsbuilder {version} pins; the project had none)",
                "create"
            );
            return;
        }
        LockUpdate::Updated(lock) => lock,
    };
    let (moved, added) = if dry_run {
        ("would move", "would add")
    } else {
        ("moved", "added")
    };
    if !lock.recorded {
        println!(
            "{:<8} {FILE}: no record of the versions rsbuilder wrote before ({PINNED}; the project predates it), so every version in it is kept as yours; the pins of rsbuilder {version} are recorded from now on",
            "lock"
        );
    }
    if lock.updated.is_empty() && lock.kept.is_empty() && lock.added == 0 {
        println!(
            "{:<8} {PINNED} ({FILE} has the pins of rsbuilder {version} already)",
            "record"
        );
        return;
    }
    if !lock.updated.is_empty() {
        println!(
            "{:<8} {FILE}: {moved} {} to the versions rsbuilder {version} pins (what its tests built the runtime with)",
            "lock",
            count(lock.updated.len(), "package")
        );
        for c in &lock.updated {
            println!("           {} {} -> {}", c.name, c.from, c.to);
        }
    }
    if lock.added > 0 {
        println!(
            "{:<8} {FILE}: {added} {} rsbuilder {version} pins that it lacked (the next build drops those the project does not use)",
            "lock",
            count(lock.added, "package")
        );
    }
    for c in &lock.kept {
        println!(
            "{:<8} {FILE}: {} {}: yours, kept (rsbuilder {version} pins {}; `cargo update -p {}` is yours to run)",
            "lock", c.name, c.from, c.to, c.name
        );
    }
}

/// `alpha generate`: prints `add` / `change` / `merge` / `keep` / `conflict` / `remove` per
/// path, the notes, and the next steps. In place, files that cannot merge are listed and
/// nothing is written (exit code 1); with `--force` they are written with conflict blocks
/// (exit code 1 too).
fn generate(cwd: &Path, root: &Path, args: GenerateArgs) -> anyhow::Result<i32> {
    use crate::scaffold::alpha;
    let input = match &args.input_dir {
        Some(dir) => cwd.join(dir),
        None => root.to_path_buf(),
    };
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    let output_dir = args
        .output_dir
        .as_ref()
        .map(|d| lexical(&cwd.join(d)))
        .filter(|d| !same(d, &input));
    if let Some(out) = &output_dir
        && out.exists()
        && !out.is_dir()
    {
        anyhow::bail!(
            "invalid value {} for --output-dir: it exists and is not a directory",
            out.display()
        );
    }
    // Written only in place; read only when the output goes elsewhere.
    let _lock = match &output_dir {
        Some(_) => crate::engine::lock_project_read_only(&input)?,
        None => crate::engine::lock_project(&input)?,
    };
    let _out_lock = match &output_dir {
        Some(out) if out.is_dir() => Some(crate::engine::lock_project(out)?),
        _ => None,
    };
    let opts = alpha::GenerateOptions {
        output_dir: output_dir.clone(),
        force: args.force,
    };
    let generated = alpha::plan_generate(&input, &opts)?;
    if !generated.conflicts.is_empty() && !args.force {
        eprintln!(
            "error: {} you changed cannot merge with what rsbuilder {} scaffolds; nothing was written:",
            crate::scaffold::count(generated.conflicts.len(), "file"),
            env!("CARGO_PKG_VERSION")
        );
        for (path, why) in &generated.conflicts {
            eprintln!("  {}: {why}", path.display());
        }
        eprintln!(
            "  help: run `rsbuilder alpha generate --output-dir <new directory>` to get this \
             version's project beside yours and compare; or commit, then run `rsbuilder alpha \
             generate --force` to write these files with conflict blocks (`<<<<<<< ours` your \
             text, `||||||| original` what rsbuilder wrote before, `=======`, this version's \
             text up to `>>>>>>> theirs`) and resolve them"
        );
        return Ok(super::EXIT_FAILURE);
    }
    generated.plan.apply()?;
    print!("{}", alpha::generate_report(&generated));
    for note in &generated.notes {
        eprintln!("note: {note}");
    }
    let target = output_dir.as_deref().unwrap_or(&input);
    let (added, changed, removed) = (
        generated.added.len(),
        generated.changed.len() + generated.merged.len() + generated.conflicts.len(),
        generated.removed.len(),
    );
    if output_dir.is_some() {
        println!(
            "\nWrote the project again into {}: {added} added, {changed} changed, {removed} removed \
             against {}, {} carried over unchanged.",
            target.display(),
            input.display(),
            generated.kept
        );
    } else if added + changed + removed + generated.kept_edits.len() == 0 {
        println!(
            "\nThe project is already what rsbuilder {} scaffolds from its PROJECT; nothing changed.",
            env!("CARGO_PKG_VERSION")
        );
    } else {
        println!(
            "\nRe-scaffolded in place: {added} added, {changed} changed ({} merged with your \
             edits), {removed} removed, {} kept with your edits; `git diff` shows every change.",
            generated.merged.len(),
            generated.kept_edits.len()
        );
    }
    if !generated.conflicts.is_empty() {
        eprintln!(
            "error: {} left with conflict blocks:",
            crate::scaffold::count(generated.conflicts.len(), "file")
        );
        for (path, why) in &generated.conflicts {
            eprintln!("  {}: {why}", path.display());
        }
        eprintln!(
            "  help: keep what you need between `<<<<<<< ours` (your text), `||||||| original` \
             (what rsbuilder wrote before), `=======` and `>>>>>>> theirs` (this version's \
             text), delete the marker lines, then build"
        );
        return Ok(super::EXIT_FAILURE);
    }
    println!(
        "Next: cd {} && rsbuilder manifests && cargo build && cargo test",
        target.display()
    );
    Ok(super::EXIT_OK)
}

/// `path` with `.` and `..` applied to its text (`/p/src/../out` is `/p/out`), so it can be
/// compared with the project root before the directory exists.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}
