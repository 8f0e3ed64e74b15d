#!/usr/bin/env bash
# Builds a freshly generated project (the AIJob example with a webhook and an aggregated API
# server kind, so every runtime feature a project can use is compiled) twice: once with the
# Cargo.lock `init` writes, once after `cargo update` to the newest compatible crates, and
# reports the warnings and errors the newest crates bring that the pinned ones do not.
#
#   scripts/check-latest-deps.sh [--strict]
#
# Without --strict it only reports and exits 0: what crates.io published today must not turn
# a submission red (the pinned build is the one the tests hold to). With --strict it exits 1
# when the newest crates bring a warning or an error: for a scheduled job, which says early
# that the next lock file update needs work. Environment: RSBUILDER_LATEST_TARGET_DIR, the
# target directory of the two builds (default: <repo>/target/latest-deps).
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
strict=false
case "${1:-}" in
  --strict) strict=true ;;
  "") ;;
  *) echo "usage: scripts/check-latest-deps.sh [--strict]" >&2; exit 2 ;;
esac
work="$(mktemp -d "${TMPDIR:-/tmp}/rsbuilder-latest.XXXXXX")"
trap 'rm -rf "$work"' EXIT

cargo build --quiet --manifest-path "$repo/Cargo.toml" --bin rsbuilder || exit 1
rsbuilder="${CARGO_TARGET_DIR:-$repo/target}/debug/rsbuilder"
export CARGO_TARGET_DIR="${RSBUILDER_LATEST_TARGET_DIR:-$repo/target/latest-deps}"
project="$work/latest-deps-check"
mkdir -p "$project"
(
  cd "$project" &&
  "$rsbuilder" init --domain example.com --repo example.com/latest-deps-check >/dev/null &&
  "$rsbuilder" create api --group ai --version v1 --kind AIJob >/dev/null &&
  "$rsbuilder" create webhook --group ai --version v1 --kind AIJob --defaulting --programmatic-validation >/dev/null &&
  "$rsbuilder" create apiserver --group db --version v1 --kind Database >/dev/null &&
  "$rsbuilder" manifests >/dev/null 2>&1
) || { echo "check-latest-deps: scaffolding the project failed" >&2; exit 1; }

# Warnings and errors of a build, one per line, without the file positions that differ.
diagnostics() {
  grep -E '^(warning|error)(\[|:)' "$1" | grep -v -E '^warning: .* generated [0-9]+ warnings?|^error: could not compile' | sort -u
}

(cd "$project" && cargo build --all-targets --message-format short >"$work/pinned.log" 2>&1)
pinned_rc=$?
(cd "$project" && cargo update >"$work/update.log" 2>&1)
(cd "$project" && cargo build --all-targets --message-format short >"$work/latest.log" 2>&1)
latest_rc=$?

echo "== crates cargo update moved:"
grep -E '^\s+(Updating|Adding|Removing) ' "$work/update.log" | sed 's/^ */  /' || echo "  none"
new=$(comm -13 <(diagnostics "$work/pinned.log") <(diagnostics "$work/latest.log"))
if [ "$pinned_rc" -ne 0 ]; then
  echo "== the pinned build failed (this is a bug in rsbuilder's lock file or runtime):"
  diagnostics "$work/pinned.log" | sed 's/^/  /'
fi
if [ -z "$new" ] && [ "$latest_rc" -eq 0 ]; then
  echo "== the newest compatible crates build with no new warning or error"
  [ "$pinned_rc" -eq 0 ] || exit 1
  exit 0
fi
echo "== what the newest compatible crates bring (exit $latest_rc):"
printf '%s\n' "$new" | sed 's/^/  /'
grep -E -A6 '^(warning|error)(\[|:)' "$work/latest.log" | head -60 | sed 's/^/    /'
if $strict || [ "$pinned_rc" -ne 0 ]; then
  exit 1
fi
echo "(report only: run with --strict to fail on it)"
exit 0
