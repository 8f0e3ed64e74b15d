#!/usr/bin/env bash
# The main job in one command: scaffold the AIJob example from scratch with rsbuilder,
# derive its manifests, build and test it, and show where everything is.
#
#   scripts/quickstart.sh [DIR]
#
# DIR (default: a new temporary directory) receives the project in DIR/ai-operator; it must
# not already hold one. Environment:
#   RSBUILDER_PROFILE=release      build rsbuilder with --release (default: debug)
#   RSBUILDER_QUICKSTART_TARGET_DIR=PATH  target directory of the generated project's build
#                                  (default: <repo>/target/quickstart)
#
# Needs cargo (and perl, for the spec edit). Exits non-zero on the first failure.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
profile="${RSBUILDER_PROFILE:-debug}"
# A target directory of its own: cargo names artifacts by package name, so sharing one with
# examples/ai-operator (also `ai-operator`) could run that crate's stale test binaries.
gen_target="${RSBUILDER_QUICKSTART_TARGET_DIR:-$repo/target/quickstart}"

step() {
  if [[ -t 1 ]]; then printf '\n\033[1m==> %s\033[0m\n' "$*"; else printf '\n==> %s\n' "$*"; fi
}
die() { printf 'quickstart: %s\n' "$*" >&2; exit 1; }

case "$profile" in
  debug) build_flags=() ;;
  release) build_flags=(--release) ;;
  *) die "RSBUILDER_PROFILE must be debug or release, not '$profile'" ;;
esac
command -v cargo >/dev/null || die "cargo is not installed (https://rustup.rs)"
command -v perl >/dev/null || die "perl is needed for the spec edit"

workdir="${1:-}"
if [[ -z "$workdir" ]]; then
  workdir="$(mktemp -d "${TMPDIR:-/tmp}/rsbuilder-quickstart.XXXXXX")"
fi
mkdir -p "$workdir"
workdir="$(cd "$workdir" && pwd)"
project="$workdir/ai-operator"
[[ ! -e "$project" ]] || die "$project already exists; pass another directory"

step "Building rsbuilder ($profile)"
(cd "$repo" && cargo build ${build_flags[@]+"${build_flags[@]}"} --bin rsbuilder)
# cargo puts the binary under CARGO_TARGET_DIR when set (relative to the repo, where it ran).
target_root="${CARGO_TARGET_DIR:-target}"
[[ "$target_root" = /* ]] || target_root="$repo/$target_root"
rsbuilder="$target_root/$profile/rsbuilder"
[[ -x "$rsbuilder" ]] || die "no rsbuilder binary at $rsbuilder"

mkdir "$project"
cd "$project"

step "rsbuilder init --domain example.com --repo example.com/ai-operator"
"$rsbuilder" init --domain example.com --repo example.com/ai-operator

step "rsbuilder create api --group ai --version v1 --kind AIJob"
"$rsbuilder" create api --group ai --version v1 --kind AIJob

step "rsbuilder create webhook --group ai --version v1 --kind AIJob --defaulting --programmatic-validation"
"$rsbuilder" create webhook --group ai --version v1 --kind AIJob \
  --defaulting --programmatic-validation

step "Editing the spec to the AIJob example's fields (src/api/v1/aijob_types.rs)"
# Replace the body of `pub struct AIJobSpec { ... }` (the scaffold's example field) with the
# AIJob example's fields: modelName, gpuCount, replicas (at most 100).
types=src/api/v1/aijob_types.rs
perl -0pi -e '
  s{(?:///[^\n]*\n)+(?://[^\n]*\n)*(\#\[derive\(CustomResource)}{/// The desired state of an AIJob (ai.example.com/v1), as in the AIJob example.\n$1}
    or die "no doc comment above `#[derive(CustomResource` in '"$types"'\n";
  s{(pub struct AIJobSpec \{\n).*?(\n\}\n)}{$1 .
    "    /// The model the workers train.\n" .
    "    pub model_name: String,\n" .
    "    /// GPUs each worker requests.\n" .
    "    pub gpu_count: i32,\n" .
    "    /// How many workers; the defaulting webhook sets 1 when absent.\n" .
    "    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n" .
    "    #[schemars(range(max = 100))]\n" .
    "    pub replicas: Option<i32>," . $2}se
    or die "no `pub struct AIJobSpec {` block in '"$types"'\n";
' "$types"
grep -q 'pub gpu_count: i32' "$types" || die "the spec edit did not apply to $types"
sed -n '/^\/\/\/ The desired state of an AIJob/,/^}/p' "$types"

step "Webhook logic for the new fields (src/webhook/v1/aijob_webhook.rs)"
# The scaffolded webhook fills in and checks the example field the spec no longer has. Its
# doc comments show the AIJob example's rules; examples/ai-operator has them written out (replicas
# default 1, at most 100, with tests), so take that file.
cp "$repo/examples/ai-operator/src/webhook/v1/aijob_webhook.rs" src/webhook/v1/aijob_webhook.rs

step "The sample for the new fields (config/samples/ai_v1_aijob.yaml)"
# The controller's test applies the sample, so it must decode as the edited spec; the AIJob
# example's sample has the same metadata and the new fields.
cp "$repo/examples/ai-operator/config/samples/ai_v1_aijob.yaml" config/samples/ai_v1_aijob.yaml
grep -n 'impl Defaulter\|impl Validator\|async fn default\|MAX_REPLICAS: i32' src/webhook/v1/aijob_webhook.rs

step "rsbuilder manifests"
"$rsbuilder" manifests
crd=config/crd/bases/ai.example.com_aijobs.yaml
[[ -f "$crd" ]] || die "rsbuilder manifests wrote no $crd"
"$rsbuilder" manifests --check

step "The CRD's spec properties ($crd)"
# The `properties:` and `required:` of `spec`, down to where `status` starts.
awk '
  /^          spec:$/ { in_spec = 1 }
  in_spec && /^          status:$/ { exit }
  in_spec && /^            properties:$/ { on = 1 }
  on { print }
' "$crd"
for want in 'modelName:' 'gpuCount:' 'maximum: 100.0'; do
  grep -q "$want" "$crd" || die "$crd lacks $want"
done

step "cargo build && cargo test (CARGO_TARGET_DIR=$gen_target)"
export CARGO_TARGET_DIR="$gen_target"
cargo build
cargo test

step "Done"
cat <<EOF
The AIJob operator is in $project:
  src/api/v1/aijob_types.rs              the AIJob type (source of the CRD)
  src/controller/aijob_controller.rs     the reconcile loop (put your logic in apply)
  src/webhook/v1/aijob_webhook.rs        defaulting and validating webhooks
  config/crd/bases/ai.example.com_aijobs.yaml  the CRD (rsbuilder manifests)
  config/rbac/role.yaml                  the manager's ClusterRole (from +kubebuilder:rbac markers)
  config/webhook/manifests.yaml          the webhook configurations (from +kubebuilder:webhook markers)
  config/default/                        kustomize entry point: kubectl apply -k config/default
The manager binary: $gen_target/debug/manager (a shared target directory: run it with
"cargo run --bin manager" in the project, which rebuilds it if another project replaced it).
The finished operator, the AIJob example with its reconcile logic, is in $repo/examples/ai-operator.
EOF
