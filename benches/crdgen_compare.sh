#!/usr/bin/env bash
# The crdgen loop versus `rsbuilder manifests`, on the same project (the Database example's and
# the AIJob example's types, as in benches/manifests.rs).
#
# crdgen loop: a kube-rs crate with a `crdgen` binary that prints `crd()` as YAML; after an
# edit of the types file (simulated with `touch`), `cargo run --bin crdgen` recompiles the
# crate and runs it. Measured warm: dependencies already built, only the crate rebuilds.
# rsbuilder: `rsbuilder manifests --paths src` (release build), after the same touch.
#
# Usage: benches/crdgen_compare.sh            (RUNS=5 crdgen runs, 20x as many rsbuilder runs)
# Env:   RUNS, CRDGEN_BENCH_DIR (default target/crdgen-bench), CRDGEN_TARGET_DIR (its own
#        target dir by default, so other builds sharing a target dir do not hold its lock).
# Prints the medians and the ratio; docs/benchmarks.md records the figures.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${RUNS:-5}
WORK=${CRDGEN_BENCH_DIR:-$ROOT/target/crdgen-bench}
TARGET=${CRDGEN_TARGET_DIR:-$WORK/target}
CASES=$ROOT/tests/conformance/fixtures/src/cases

mkdir -p "$WORK/src/api/v1" "$WORK/src/bin"
cp "$CASES/database_example.rs" "$WORK/src/api/v1/database_types.rs"
cp "$CASES/aijob_example.rs" "$WORK/src/api/v1/aijob_types.rs"
printf 'pub mod aijob_types;\npub mod database_types;\n' > "$WORK/src/api/v1/mod.rs"
printf 'pub mod v1;\n' > "$WORK/src/api/mod.rs"
printf 'pub mod api;\n' > "$WORK/src/lib.rs"
cat > "$WORK/Cargo.toml" <<'EOF'
[package]
name = "crdgen-bench"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
kube = { version = "5", default-features = false, features = ["derive"] }
k8s-openapi = { version = "0.29", features = ["v1_37", "schemars"] }
schemars = "1"
serde = { version = "1", features = ["derive"] }
serde_json = "1"
serde-saphyr = "2"
EOF
cat > "$WORK/src/bin/crdgen.rs" <<'EOF'
use crdgen_bench::api::v1::{aijob_types::AIJob, database_types::Database};
use kube::CustomResourceExt;

fn main() {
    print!("{}", serde_saphyr::to_string(&Database::crd()).unwrap());
    println!("---");
    print!("{}", serde_saphyr::to_string(&AIJob::crd()).unwrap());
}
EOF

# Timestamps in microseconds from bash's EPOCHREALTIME: reading it forks nothing, so the
# clock adds no process start of its own to the few milliseconds of an rsbuilder run.
median_ms() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.2f", m/1e3}'; }

echo "building rsbuilder (release) and warming the crdgen crate..." >&2
(cd "$ROOT" && cargo build --quiet --release --bin rsbuilder)
RSBUILDER=${CARGO_TARGET_DIR:-$ROOT/target}/release/rsbuilder
(cd "$WORK" && CARGO_TARGET_DIR=$TARGET cargo build --quiet --bin crdgen)

crdgen_times=()
for _ in $(seq "$RUNS"); do
  touch "$WORK/src/api/v1/database_types.rs"
  t0=${EPOCHREALTIME//[.,]/}
  (cd "$WORK" && CARGO_TARGET_DIR=$TARGET cargo run --quiet --bin crdgen > "$WORK/crdgen.yaml")
  t1=${EPOCHREALTIME//[.,]/}
  crdgen_times+=($((t1 - t0)))
done

rs_times=()
for _ in $(seq $((RUNS * 20))); do
  touch "$WORK/src/api/v1/database_types.rs"
  t0=${EPOCHREALTIME//[.,]/}
  "$RSBUILDER" manifests --dir "$WORK" --paths "$WORK/src" --output-dir "$WORK/config" > /dev/null
  t1=${EPOCHREALTIME//[.,]/}
  rs_times+=($((t1 - t0)))
done

crdgen_ms=$(printf '%s\n' "${crdgen_times[@]}" | median_ms)
rs_ms=$(printf '%s\n' "${rs_times[@]}" | median_ms)
echo "crdgen loop (touch + cargo run --bin crdgen, warm): median ${crdgen_ms} ms over ${RUNS} runs"
echo "rsbuilder manifests (touch + run, release binary):  median ${rs_ms} ms over $((RUNS * 20)) runs"
awk -v a="$crdgen_ms" -v b="$rs_ms" 'BEGIN { printf "rsbuilder is %.0fx faster\n", a / b }'
