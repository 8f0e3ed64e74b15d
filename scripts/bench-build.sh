#!/usr/bin/env bash
# The build benchmark: the quick start's AIJob project beside kube-rs's
# reference operator, controller-rs, measured in the same run, one after the other.
#
#   scripts/bench-build.sh CONTROLLER_RS [OUT]
#
# RSBUILDER, if set, names the rsbuilder binary to scaffold with (default: a release build of this
# checkout). CONTROLLER_RS is a checkout of https://github.com/kube-rs/controller-rs, or its bare git
# directory (as `git clone --bare` or a mirror leaves it; HEAD is extracted). OUT (default: a new
# temporary directory) receives both projects and their target directories.
#
# For each project, with an empty target directory and a warm registry (`cargo fetch` first):
#   cold `cargo build`, then `cargo test --no-run`, the target directory's size, an incremental
#   `cargo build` after touching the controller, and the release binary's size (a separate
#   `cargo build --release`, not part of the timed figures; BENCH_RELEASE=0 skips it). Prints a Markdown table for
#   docs/benchmarks.md. Run it on an idle machine: the figures are wall-clock times.
#
# The manager's idle memory needs a cluster (both managers exit without one); it is measured
# only when KUBECONFIG is set, as the peak RSS of 20 s of running.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() { printf 'bench-build: %s\n' "$*" >&2; exit 1; }
[[ $# -ge 1 ]] || { sed -n '2,18p' "$0" >&2; exit 2; }
src="$1"
out="${2:-$(mktemp -d "${TMPDIR:-/tmp}/rsbuilder-bench-build.XXXXXX")}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
command -v /usr/bin/time >/dev/null || die "/usr/bin/time is needed (Debian package: time)"

# controller-rs, from a checkout or a bare git directory.
crs="$out/controller-rs"
rm -rf "$crs"
if [[ -f "$src/Cargo.toml" ]]; then
  cp -r "$src" "$crs"
  rm -rf "$crs/target"
elif git --git-dir "$src" rev-parse --verify HEAD >/dev/null 2>&1; then
  mkdir -p "$crs"
  git --git-dir "$src" archive HEAD | tar -x -C "$crs"
else
  die "$src is neither a controller-rs checkout nor a git directory"
fi
crs_rev="$(git -C "$crs" rev-parse --short HEAD 2>/dev/null || git --git-dir "$src" rev-parse --short HEAD)"

# The AIJob project of the quick start (its webhook included).
aijob="$out/ai-operator"
rm -rf "$aijob"
if [[ -n "${RSBUILDER:-}" ]]; then
  rsbuilder="$RSBUILDER" # an rsbuilder binary already built (its speed is not measured here)
else
  cargo build --release --quiet --manifest-path "$repo/Cargo.toml" --bin rsbuilder
  rsbuilder="$repo/target/release/rsbuilder"
fi
mkdir -p "$aijob"
(
  cd "$aijob"
  "$rsbuilder" init --domain ai.example.com --repo example.com/ai-operator >/dev/null
  "$rsbuilder" create api --group ai --version v1 --kind AIJob >/dev/null
  "$rsbuilder" create webhook --group ai --version v1 --kind AIJob \
    --defaulting --programmatic-validation >/dev/null
  "$rsbuilder" manifests >/dev/null
)

# Seconds of wall time of a command run in $1.
timed() {
  local dir="$1"; shift
  local start end
  start="$(date +%s.%N)"
  (cd "$dir" && "$@" >/dev/null 2>&1) || die "in $dir: $* failed"
  end="$(date +%s.%N)"
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }'
}

# name dir controller-file binary
measure() {
  local name="$1" dir="$2" controller="$3" bin="$4"
  local target="$out/target-$name"
  rm -rf "$target"
  (cd "$dir" && cargo fetch --quiet)
  export CARGO_TARGET_DIR="$target"
  local cold test_build size incr rel_size idle="—"
  cold="$(timed "$dir" cargo build)"
  # controller-rs's tests need Go (its envtest dev-dependency builds Go code): without a Go
  # toolchain its test build fails, which is reported in the table instead of ending the run.
  # `timed` exits on failure (die), so it runs in its own subshell for the `||` to apply.
  test_build="$( (timed "$dir" cargo test --no-run) 2>/dev/null || echo "failed (see cargo test --no-run in $dir)")"
  [[ "$test_build" == failed* ]] || test_build="$test_build s"
  size="$(du -sm "$target" | cut -f1)"
  touch "$dir/$controller"
  incr="$(timed "$dir" cargo build)"
  rel_size="—"
  if [[ "${BENCH_RELEASE:-1}" != 0 ]]; then
    (cd "$dir" && cargo build --release --quiet --bin "$bin")
    rel_size="$(( $(stat -c %s "$target/release/$bin") / 1024 / 1024 ))"
  fi
  if [[ -n "${KUBECONFIG:-}" ]]; then
    idle="$( (cd "$dir" && timeout 20 /usr/bin/time -f %M "$target/release/$bin" 2>&1 >/dev/null || true) | tail -1)"
    idle="$(( idle / 1024 )) MiB"
  fi
  unset CARGO_TARGET_DIR
  printf '| %s | %s s | %s | %s MB | %s s | %s MiB | %s |\n' \
    "$name" "$cold" "$test_build" "$size" "$incr" "$rel_size" "$idle"
}

printf 'Measured %s on %s cores, load before: %s\n' "$(date -u +%F)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf 'rsbuilder %s, controller-rs %s\n\n' "$(git -C "$repo" rev-parse --short HEAD)" "$crs_rev"
printf '| Project | cold `cargo build` | then `cargo test --no-run` | target dir | incremental build after a controller edit | release binary | idle memory |\n'
printf '|---|---|---|---|---|---|---|\n'
measure ai-operator "$aijob" src/controller/aijob_controller.rs manager
measure controller-rs "$crs" src/controller.rs controller
printf '\nLoad after: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
