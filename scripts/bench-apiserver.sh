#!/usr/bin/env bash
# The aggregated API server's benchmark (runtime/benches/apiserver.rs):
# create, get, list and watch throughput and p50/p99 latency over TLS on loopback, 10k
# objects, 100 concurrent watchers, memory and recovery after a restart, on redb and, when
# `etcd` and `protoc` are installed (.ci/run installs etcd-server and protobuf-compiler), on
# etcd. Prints a Markdown table for docs/benchmarks.md, with the load average before and after.
#
#   scripts/bench-apiserver.sh
#
# Sizes: BENCH_OBJECTS (10000), BENCH_CONNECTIONS (16), BENCH_WATCHERS (100),
# BENCH_WATCH_WRITES (1000). The figures are wall-clock times: note the machine's load.
# Then runtime/benches/lists_under_writes.rs: BENCH_LIST_OBJECTS (25000) Databases, BENCH_APPLIES
# (5000) forced server-side applies, and `kubectl get` (default chunking) and a default kube-rs
# reflector under 10 writes/s, on the same stores. BENCH_ONLY=lists runs only that one.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

features=apiserver
if command -v etcd >/dev/null 2>&1 && command -v protoc >/dev/null 2>&1; then
  features=etcd
else
  echo "bench-apiserver: no etcd or protoc in PATH: redb only" \
    "(install them as .ci/run does: apt-get install etcd-server protobuf-compiler)" >&2
fi
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown); $(nproc) CPUs; $(uname -sr)"
echo "rustc: $(rustc --version)"
command -v etcd >/dev/null 2>&1 && echo "etcd: $(etcd --version | head -1)"
if [ "${BENCH_ONLY:-}" != lists ]; then
  cargo bench -p rsbuilder-runtime --features "$features" --bench apiserver
fi
command -v kubectl >/dev/null 2>&1 && echo "kubectl: $(kubectl version --client 2>/dev/null | head -1)"
cargo bench -p rsbuilder-runtime --features "$features" --bench lists_under_writes
