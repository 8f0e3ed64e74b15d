#!/usr/bin/env bash
# Runs a campaign of the differential generator (tests/manifests/difftest.rs): every kind of every seed in
# the range is generated, compiled with kube-derive in batches and compared with rsbuilder.
# Usage: scripts/difftest-campaign.sh FIRST_SEED LAST_SEED [KINDS_PER_SEED] [BATCH]
#   KINDS_PER_SEED defaults to 500, BATCH (kinds per kube-derive build) to 500.
#   RSBUILDER_DIFFTEST_FEATURES=... turns on grammar features (see tests/manifests/difftest/grammar.rs).
# Runs niced (the machine is shared). Writes the figures to
# $RSBUILDER_E2E_TARGET_DIR/difftest/campaign-FIRST-LAST.md (default target/e2e) and shrunk
# failing cases to .../difftest/shrunk/; record the figures in docs/conformance.md.
# Exit status: 0 when no silent mismatch was found.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 2 ]; then
  sed -n '2,10p' "$0" >&2
  exit 2
fi

export CARGO_INCREMENTAL=0
export CARGO_PROFILE_DEV_DEBUG=line-tables-only
export RSBUILDER_E2E_TARGET_DIR="${RSBUILDER_E2E_TARGET_DIR:-$PWD/target/e2e}"
export RSBUILDER_DIFFTEST_SEEDS="$1-$2"
export RSBUILDER_DIFFTEST_KINDS="${3:-500}"
export RSBUILDER_DIFFTEST_BATCH="${4:-500}"

exec nice -n 19 cargo test --quiet --test manifests -- --ignored --exact difftest::campaign --nocapture
