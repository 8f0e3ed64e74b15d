//! `rsbuilder init`: the files of a new kube-rs operator project, rendered from the askama
//! templates under `templates/init/` (laid out like the tree they generate).
//!
//! The tree mirrors what Kubebuilder's `init` writes for a Go project (PROJECT, Makefile,
//! Dockerfile, `config/{default,rbac,manager,prometheus,network-policy}`), with a Rust
//! manager in place of `cmd/main.go`. Later commands extend the files through the
//! `+kubebuilder:scaffold:<name>` markers the templates leave; docs/generated-project.md
//! lists them.

use std::path::{Path, PathBuf};

use askama::Template;
use thiserror::Error;

use super::{File, Format, Plan, RenderError, ScaffoldError, render};
use crate::model::Project;
use crate::model::gvk::{NameError, validate_domain, validate_project_name};
use crate::model::layout;
use crate::model::project::FILE_NAME as PROJECT_FILE;

/// Files whose presence means the directory already holds a project: `init` refuses to run.
pub const PROJECT_MARKERS: [&str; 3] = [PROJECT_FILE, layout::CARGO_TOML, layout::MAIN_RS];

/// Everything `init` needs to render the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitOptions {
    /// `--domain`: groups of the project's APIs are `<group>.<domain>`.
    pub domain: String,
    /// `--repo`: repository path recorded in PROJECT and Cargo.toml.
    pub repo: String,
    /// `--project-name`, or the directory name: package name, prefix of cluster objects.
    pub project_name: String,
    /// `--owner`: copyright holder in license headers; empty for none (the header then says
    /// `Copyright <year>.`).
    pub owner: String,
    /// `--license`: the header of generated Rust sources, the LICENSE file and Cargo.toml's
    /// `license`.
    pub license: License,
    /// `--namespaced`: the manager watches only its own namespace; RBAC uses Roles.
    pub namespaced: bool,
    /// `--multigroup`: PROJECT gets `multigroup: true`, so APIs go to
    /// `src/api/<group>/<version>/` (see [`crate::model::layout`]).
    pub multigroup: bool,
    /// Copyright year in license headers.
    pub year: i32,
    /// `--runtime`: a tool-owned copy of the runtime crate in the project (the default), or
    /// a dependency on it by version (recorded in PROJECT).
    pub runtime: super::runtime::Source,
}

/// The license of a generated project, as `--license` names it. Like Kubebuilder's
/// boilerplate, it decides the comment block at the top of every generated Rust source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum License {
    /// No header, no LICENSE file.
    None,
    /// Apache License 2.0: its standard notice as the header, the license text as LICENSE,
    /// `license = "Apache-2.0"` in Cargo.toml.
    Apache2,
    /// MIT: a copyright line and `SPDX-License-Identifier: MIT` as the header, the license
    /// text (with year and owner) as LICENSE, `license = "MIT"` in Cargo.toml.
    Mit,
    /// A header of the user's own (`--license <file>`, or the header an existing project has),
    /// already as `//` comment lines followed by a blank line: written as it is, no LICENSE.
    Header(String),
}

impl License {
    /// The comment block put at the top of generated Rust files (empty for [`License::None`]).
    pub fn rust_header(&self, year: i32, owner: &str) -> String {
        let copyright = copyright_line(year, owner);
        match self {
            License::None => String::new(),
            License::Apache2 => format!(
                "// {copyright}\n\
                 //\n\
                 // Licensed under the Apache License, Version 2.0 (the \"License\");\n\
                 // you may not use this file except in compliance with the License.\n\
                 // You may obtain a copy of the License at\n\
                 //\n\
                 //     http://www.apache.org/licenses/LICENSE-2.0\n\
                 //\n\
                 // Unless required by applicable law or agreed to in writing, software\n\
                 // distributed under the License is distributed on an \"AS IS\" BASIS,\n\
                 // WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.\n\
                 // See the License for the specific language governing permissions and\n\
                 // limitations under the License.\n\n"
            ),
            License::Mit => format!("// {copyright}\n// SPDX-License-Identifier: MIT\n\n"),
            License::Header(header) => header.clone(),
        }
    }

    /// The SPDX identifier for Cargo.toml's `license`, when the license is a known one.
    pub fn spdx(&self) -> Option<&'static str> {
        match self {
            License::Apache2 => Some("Apache-2.0"),
            License::Mit => Some("MIT"),
            License::None | License::Header(_) => None,
        }
    }

    /// The LICENSE file, for the licenses rsbuilder knows.
    pub fn license_file(&self, year: i32, owner: &str) -> Option<String> {
        match self {
            License::Apache2 => Some(APACHE2_TEXT.to_owned()),
            License::Mit => Some(MIT_TEXT.replace("{copyright}", &copyright_line(year, owner))),
            License::None | License::Header(_) => None,
        }
    }

    /// A header file's text (`--license <file>`, like Kubebuilder's hack/boilerplate.go.txt)
    /// as the comment block of generated Rust files: lines that are already `//` comments stay,
    /// other lines get `// `, blank lines `//`; a blank line follows. `None` for an empty file.
    pub fn from_header_file(text: &str) -> Option<License> {
        let lines: Vec<&str> = text.trim_end().lines().collect();
        if lines.iter().all(|l| l.trim().is_empty()) {
            return None;
        }
        let mut header = String::new();
        for line in lines {
            let line = line.trim_end();
            if line.starts_with("//") && !line.starts_with("///") && !line.starts_with("//!") {
                header.push_str(line);
            } else if line.is_empty() {
                header.push_str("//");
            } else {
                header.push_str("// ");
                header.push_str(line);
            }
            header.push('\n');
        }
        header.push('\n');
        Some(License::Header(header))
    }
}

/// `Copyright <year> <owner>.`, or `Copyright <year>.` without an owner.
fn copyright_line(year: i32, owner: &str) -> String {
    let owner = owner.trim().trim_end_matches('.');
    if owner.is_empty() {
        format!("Copyright {year}.")
    } else {
        format!("Copyright {year} {owner}.")
    }
}

/// Why `init` refused to run. Nothing is written when one of these is returned.
#[derive(Debug, Error)]
pub enum InitError {
    /// A flag value broke a naming rule.
    #[error(transparent)]
    Name(#[from] NameError),
    /// The directory already holds a project (or files `init` would overwrite).
    #[error(
        "{dir} already holds {}; `rsbuilder init` only scaffolds a new project and changed nothing",
        .existing.join(", ")
    )]
    AlreadyInitialized {
        /// The project directory.
        dir: PathBuf,
        /// The files in the way, relative to `dir`.
        existing: Vec<String>,
    },
    /// The directory is inside another project (a `PROJECT` file in a parent directory).
    #[error(
        "{dir} is inside the project at {root} (its PROJECT file is there); `rsbuilder init` \
         would nest a second project in it and changed nothing. Run rsbuilder commands for that \
         project from anywhere inside it; start a new project in a directory outside it"
    )]
    InsideProject {
        /// The directory `init` was run in.
        dir: PathBuf,
        /// The root of the enclosing project.
        root: PathBuf,
    },
    /// No `--project-name` and the directory has no usable name.
    #[error("cannot take a project name from the directory {0}; pass --project-name")]
    NoDirectoryName(PathBuf),
    /// A template did not render.
    #[error(transparent)]
    Template(#[from] RenderError),
}

/// The template context: options plus the values derived from them.
struct Ctx {
    project_name: String,
    crate_name: String,
    domain: String,
    repo: String,
    copyright: String,
    apache2: bool,
    mit: bool,
    spdx: &'static str,
    namespaced: bool,
    leader_election_id: String,
    rust_header: String,
    /// Where the generated CI workflows install rsbuilder from (`cargo install --git`): this
    /// crate's repository.
    rsbuilder_git: &'static str,
}

macro_rules! templates {
    ($($name:ident => $path:literal),* $(,)?) => {
        $(
            #[derive(Template)]
            #[template(path = $path)]
            struct $name<'a> {
                // Static templates (Dockerfile, .gitignore, ...) do not read the context.
                #[allow(dead_code)]
                p: &'a Ctx,
            }
        )*
    };
}

templates! {
    CargoToml => "init/Cargo.toml.askama",
    LibRs => "init/src/lib.rs",
    MainRs => "init/src/main.rs",
    DefaultKustomization => "init/config/default/kustomization.yaml",
    MetricsService => "init/config/default/metrics_service.yaml",
    RbacKustomization => "init/config/rbac/kustomization.yaml",
    ServiceAccount => "init/config/rbac/service_account.yaml",
    Role => "init/config/rbac/role.yaml",
    RoleBinding => "init/config/rbac/role_binding.yaml",
    LeaderElectionRole => "init/config/rbac/leader_election_role.yaml",
    LeaderElectionRoleBinding => "init/config/rbac/leader_election_role_binding.yaml",
    MetricsAuthRole => "init/config/rbac/metrics_auth_role.yaml",
    MetricsAuthRoleBinding => "init/config/rbac/metrics_auth_role_binding.yaml",
    MetricsReaderRole => "init/config/rbac/metrics_reader_role.yaml",
    ManagerKustomization => "init/config/manager/kustomization.yaml",
    ManagerYaml => "init/config/manager/manager.yaml",
    PrometheusKustomization => "init/config/prometheus/kustomization.yaml",
    Monitor => "init/config/prometheus/monitor.yaml",
    NetworkPolicyKustomization => "init/config/network-policy/kustomization.yaml",
    AllowMetricsTraffic => "init/config/network-policy/allow-metrics-traffic.yaml",
    Dockerfile => "init/Dockerfile",
    DockerIgnore => "init/.dockerignore",
    GitIgnore => "init/.gitignore",
    Makefile => "init/Makefile",
    Readme => "init/README.md",
    E2eTestsRs => "init/tests/e2e.rs",
    LintWorkflow => "init/.github/workflows/lint.yml",
    TestWorkflow => "init/.github/workflows/test.yml",
    TestE2eWorkflow => "init/.github/workflows/test-e2e.yml",
}

/// The Apache License 2.0 text written to `LICENSE` with `--license apache2`.
const APACHE2_TEXT: &str = include_str!("../../templates/init/LICENSE");

/// The MIT License text written to `LICENSE` with `--license mit`; `{copyright}` becomes the
/// copyright line.
const MIT_TEXT: &str = include_str!("../../templates/init/LICENSE-MIT");

impl InitOptions {
    /// Checks every value, each rejection naming the flag, the value and the rule:
    /// `--domain` is a DNS-1123 subdomain; `--project-name` is a DNS-1123 label that starts
    /// with a letter and is not a Rust keyword (it becomes the Cargo package and crate name);
    /// `--repo` has no whitespace, quotes or backslashes (it goes into Cargo.toml);
    /// `--owner` is one line; the Lease name `<project>.<domain>` fits in 253 characters.
    pub fn validate(&self) -> Result<(), NameError> {
        validate_domain(&self.domain)?;
        validate_project_name(&self.project_name)?;
        let name_error = |flag: &str, value: &str, reason: String| NameError {
            flag: flag.into(),
            value: value.into(),
            reason,
        };
        crate::model::validate::crate_package_name(&self.project_name).map_err(|r| {
            name_error(
                "--project-name",
                &self.project_name,
                format!("{r} (it is the directory's name unless --project-name sets it)"),
            )
        })?;
        crate::model::validate::repo(&self.repo)
            .map_err(|r| name_error("--repo", &self.repo, r))?;
        crate::model::validate::single_line(&self.owner)
            .map_err(|r| name_error("--owner", &self.owner, format!("the owner {r}")))?;
        let lease = leader_election_id(&self.project_name, &self.domain);
        if lease.len() > crate::model::validate::SUBDOMAIN_MAX {
            return Err(name_error(
                "--domain",
                &self.domain,
                format!(
                    "the leader-election Lease name {lease:?} would be longer than {} \
                     characters; choose a shorter domain or project name",
                    crate::model::validate::SUBDOMAIN_MAX
                ),
            ));
        }
        Ok(())
    }

    fn context(&self) -> Ctx {
        let rust_header = self.license.rust_header(self.year, &self.owner);
        Ctx {
            project_name: self.project_name.clone(),
            crate_name: self.project_name.replace('-', "_"),
            domain: self.domain.clone(),
            repo: self.repo.clone(),
            copyright: copyright_line(self.year, &self.owner),
            apache2: self.license == License::Apache2,
            mit: self.license == License::Mit,
            spdx: self.license.spdx().unwrap_or_default(),
            namespaced: self.namespaced,
            leader_election_id: leader_election_id(&self.project_name, &self.domain),
            rust_header,
            rsbuilder_git: env!("CARGO_PKG_REPOSITORY"),
        }
    }
}

/// Default name of the leader-election Lease: `<project>.<domain>`, unique per operator as
/// Kubebuilder's `<hash>.<domain>` is, and readable.
pub fn leader_election_id(project_name: &str, domain: &str) -> String {
    format!("{project_name}.{domain}")
}

/// The project name `init` uses: `--project-name` when given, else the directory's name.
pub fn project_name(dir: &Path, flag: Option<&str>) -> Result<String, InitError> {
    match flag {
        Some(name) => Ok(name.to_owned()),
        None => dir
            .file_name()
            .and_then(|n| n.to_str())
            .map(str::to_owned)
            .ok_or_else(|| InitError::NoDirectoryName(dir.to_path_buf())),
    }
}

/// The copyright year: from `SOURCE_DATE_EPOCH` when set (reproducible output, as the
/// reproducible-builds convention asks), else from the clock.
pub fn current_year() -> i32 {
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|v| v.trim().parse::<i64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0)
        });
    year_of(secs)
}

/// The proleptic Gregorian year of a Unix timestamp (days-to-civil conversion).
fn year_of(unix_secs: i64) -> i32 {
    let days = unix_secs.div_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    year as i32
}

/// Every file of a new project, as (relative path, contents), in a stable order. Does not
/// validate; call [`InitOptions::validate`] first.
///
/// Errors: [`RenderError`] when a template does not render.
pub fn files(opts: &InitOptions) -> Result<Vec<(&'static str, String)>, RenderError> {
    use layout::init as f;
    let c = opts.context();
    let p = &c;
    let mut project = Project::new(
        &opts.domain,
        &opts.repo,
        &opts.project_name,
        opts.namespaced,
    );
    project.multigroup = opts.multigroup;
    opts.runtime.record(&mut project);
    let mut files = vec![
        (layout::PROJECT, project.render()),
        (layout::CARGO_TOML, render(&CargoToml { p })?),
        (layout::LIB_RS, render(&LibRs { p })?),
        (layout::MAIN_RS, render(&MainRs { p })?),
        (
            layout::DEFAULT_KUSTOMIZATION,
            render(&DefaultKustomization { p })?,
        ),
        (f::METRICS_SERVICE, render(&MetricsService { p })?),
        (
            layout::RBAC_KUSTOMIZATION,
            render(&RbacKustomization { p })?,
        ),
        (f::SERVICE_ACCOUNT, render(&ServiceAccount { p })?),
        (f::ROLE, render(&Role { p })?),
        (f::ROLE_BINDING, render(&RoleBinding { p })?),
        (f::LEADER_ELECTION_ROLE, render(&LeaderElectionRole { p })?),
        (
            f::LEADER_ELECTION_ROLE_BINDING,
            render(&LeaderElectionRoleBinding { p })?,
        ),
        (f::METRICS_AUTH_ROLE, render(&MetricsAuthRole { p })?),
        (
            f::METRICS_AUTH_ROLE_BINDING,
            render(&MetricsAuthRoleBinding { p })?,
        ),
        (f::METRICS_READER_ROLE, render(&MetricsReaderRole { p })?),
        (
            f::MANAGER_KUSTOMIZATION,
            render(&ManagerKustomization { p })?,
        ),
        (layout::MANAGER_YAML, render(&ManagerYaml { p })?),
        (
            f::PROMETHEUS_KUSTOMIZATION,
            render(&PrometheusKustomization { p })?,
        ),
        (f::MONITOR, render(&Monitor { p })?),
        (
            layout::NETWORK_POLICY_KUSTOMIZATION,
            render(&NetworkPolicyKustomization { p })?,
        ),
        (
            f::ALLOW_METRICS_TRAFFIC,
            render(&AllowMetricsTraffic { p })?,
        ),
        (layout::DOCKERFILE, render(&Dockerfile { p })?),
        (f::DOCKERIGNORE, render(&DockerIgnore { p })?),
        (f::GITIGNORE, render(&GitIgnore { p })?),
        (f::MAKEFILE, render(&Makefile { p })?),
        (layout::README, render(&Readme { p })?),
        (f::E2E_TESTS, render(&E2eTestsRs { p })?),
        (f::LINT_WORKFLOW, render(&LintWorkflow { p })?),
        (f::TEST_WORKFLOW, render(&TestWorkflow { p })?),
        (f::TEST_E2E_WORKFLOW, render(&TestE2eWorkflow { p })?),
    ];
    if let Some(text) = opts.license.license_file(opts.year, &opts.owner) {
        files.push((layout::LICENSE, text));
    }
    // The crate versions rsbuilder's tests built the runtime with (src/scaffold/lockfile.rs).
    files.push((super::lockfile::FILE, super::lockfile::project_lock()));
    match opts.runtime {
        // Without the server part: `create api`, `create webhook` and `create apiserver` add
        // it when the project turns it on (src/scaffold/runtime.rs).
        super::runtime::Source::Vendored => {
            for (path, text) in super::runtime::project_files(false) {
                let path = super::runtime::FILES
                    .iter()
                    .map(|(_, p, _)| *p)
                    .find(|p| Path::new(p) == path)
                    .expect("a runtime file");
                files.push((path, text));
            }
        }
        super::runtime::Source::Crate => {
            for (path, text) in files.iter_mut() {
                *text = by_version(path, text);
            }
        }
    }
    Ok(files)
}

/// The text of the `init` file `path` for a project that depends on the runtime by version:
/// Cargo.toml names the version instead of the copy's path, and the Dockerfile and
/// `.dockerignore` copy no `rsbuilder-runtime/`. Other files are as they are.
fn by_version(path: &str, text: &str) -> String {
    use super::runtime::{DIR, PACKAGE, Source};
    let vendored = format!("{PACKAGE} = {}", Source::Vendored.dependency());
    match path {
        "Cargo.toml" => text
            .replace(
                "# The manager, metrics, TLS serving and controller machinery: tool-owned sources that\n\
                 # `rsbuilder init` wrote and `rsbuilder alpha update` refreshes (docs: rsbuilder's runtime.md).\n",
                "# The manager, metrics, TLS serving and controller machinery, by version (docs:\n\
                 # rsbuilder's runtime.md).\n",
            )
            .replace(&vendored, &format!("{PACKAGE} = {}", Source::Crate.dependency())),
        "Dockerfile" => text
            .lines()
            .filter(|l| {
                !l.starts_with(&format!("COPY {DIR}/"))
                    && !l.starts_with("# The runtime crate (tool-owned")
            })
            .map(|l| format!("{l}\n"))
            .collect(),
        ".dockerignore" => text.replace(&format!(", src/ and {DIR}/ are"), " and src/ are"),
        _ => text.to_owned(),
    }
}

/// Whether `init` writes `path` (relative to the project) as a tool-owned file: the runtime
/// crate under [`super::runtime::DIR`]. Every other file `init` writes is the user's.
pub fn is_tool_owned(path: &str) -> bool {
    Path::new(path).starts_with(super::runtime::DIR)
}

/// Plans `init` in `dir`: validates `opts`, refuses a directory that already holds a
/// project ([`PROJECT_MARKERS`]) or any file `init` would write (other than a README,
/// LICENSE or ignore file, which are kept), and returns the plan. Writes nothing.
/// The lines of the `.gitignore` init writes that keep a command's own state out of version
/// control: an interrupted command's journal and staged files, and rustfmt's scratch
/// directories of earlier versions.
pub const GITIGNORE_STATE: &[&str] = &["/.rsbuilder/txn/", "/.rsbuilder/fmt-*/"];

/// A note when the project's `.gitignore` is the user's (init keeps an existing one) and
/// lacks a line of [`GITIGNORE_STATE`] or `/target/`: which lines to add, and why. `None`
/// when there is no `.gitignore` or it has them all. Errors: the file cannot be read.
pub fn gitignore_note(plan: &Plan) -> Result<Option<String>, ScaffoldError> {
    let Some(text) = plan.read(layout::init::GITIGNORE)? else {
        return Ok(None);
    };
    let has = |line: &str| text.lines().any(|l| l.trim() == line);
    let missing: Vec<&str> = ["/target/"]
        .iter()
        .chain(GITIGNORE_STATE)
        .copied()
        .filter(|l| !has(l))
        .collect();
    if missing.is_empty() {
        return Ok(None);
    }
    Ok(Some(format!(
        "{} was there before and is kept as it is; add {}: an interrupted command leaves its journal under .rsbuilder/txn/, which must not be committed, and target/ holds build output",
        layout::init::GITIGNORE,
        missing
            .iter()
            .map(|l| format!("`{l}`"))
            .collect::<Vec<_>>()
            .join(", ")
    )))
}

pub fn plan(dir: &Path, opts: &InitOptions) -> Result<Plan, InitError> {
    opts.validate()?;
    let files = files(opts)?;
    let mut plan = Plan::new(dir, false);
    // A path that cannot even be checked (a link out of the directory) is not counted here:
    // the engine refuses it when the plan is applied, naming the link (nothing is written).
    let present = |paths: &mut dyn Iterator<Item = &str>| -> Vec<String> {
        paths
            .filter(|p| plan.exists(p).unwrap_or(false))
            .map(str::to_owned)
            .collect()
    };
    // A project is named by its marker files alone; otherwise every file init would write.
    let mut existing = present(&mut PROJECT_MARKERS.iter().copied());
    if existing.is_empty() {
        existing = present(
            &mut files
                .iter()
                .map(|(path, _)| *path)
                .filter(|p| !layout::INIT_KEEP_IF_PRESENT.contains(p)),
        );
    }
    if existing.is_empty()
        && let Some(root) = dir
            .parent()
            .and_then(|p| crate::model::find_root(p, crate::model::root::PROJECT))
    {
        return Err(InitError::InsideProject {
            dir: dir.to_path_buf(),
            root,
        });
    }
    if !existing.is_empty() {
        return Err(InitError::AlreadyInitialized {
            dir: dir.to_path_buf(),
            existing,
        });
    }
    for (path, contents) in files {
        if path == super::lockfile::FILE {
            // The lock is the user's; what rsbuilder pinned is recorded as the base `alpha
            // update` tells the user's own versions from its pins with.
            plan.add(File::new(
                super::lockfile::PINNED,
                contents.clone(),
                layout::IfExists::Overwrite,
            ));
        }
        if is_tool_owned(path) {
            plan.add(File::tool_owned(path, contents, layout::IfExists::Error));
            continue;
        }
        if path == layout::PROJECT && opts.runtime == super::runtime::Source::Vendored {
            // The rsbuilder version whose runtime the copy is: `alpha update`'s merge base.
            super::runtime::record_version(&mut plan);
        }
        // Every init template renders rustfmt-clean: user input reaches Rust files only in
        // comments (never rewrapped) and string literals whose lines stay within rustfmt's
        // width for every valid name, except the Lease name, a struct field rustfmt leaves as
        // it is however long (tests/cli/init_rustfmt.rs). Other files are never formatted.
        plan.add(File::at(layout::init_file(path), contents).with_format(Format::Preformatted));
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn years_from_timestamps() {
        assert_eq!(year_of(0), 1970);
        assert_eq!(year_of(951_782_400), 2000); // 2000-02-29
        assert_eq!(year_of(1_798_761_599), 2026); // 2026-12-31T23:59:59Z
        assert_eq!(year_of(1_798_761_600), 2027);
        assert_eq!(year_of(-1), 1969);
    }
}
