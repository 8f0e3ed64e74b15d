#!/usr/bin/env bash
# Peak memory of `rsbuilder manifests` on hostile source: a project made with `rsbuilder init`
# and `create api` (one kind), whose kind's file gets one huge addition of each shape below,
# one project per shape. Each run is `/usr/bin/time -v rsbuilder manifests --evaluate static`;
# the table gives the source's size and lines, the exit code, the wall time and the peak
# resident set. docs/benchmarks.md records the figures.
#
#   scripts/bench-hostile-input.sh [BINARY] [MEGABYTES]
#
# BINARY defaults to target/release/rsbuilder; MEGABYTES (default 50) is the size of each
# generated addition except `line`, which is always one line of 10 MB. Shapes:
#   doc      long doc comments (`/// ...`, 100 characters a line) on one struct
#   strings  string constants of 1,000 characters each
#   items    structs of three fields each
#   exprs    constants whose value is a long arithmetic expression nested 30 deep
#   line     one line of 10 MB: a slice constant of integers
set -euo pipefail
BIN=$(realpath "${1:-target/release/rsbuilder}")
MB=${2:-50}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

export SOURCE_DATE_EPOCH=1780272000 XDG_STATE_HOME="$WORK/state"
mkdir -p "$WORK/base"
(cd "$WORK/base" &&
  "$BIN" init --domain example.com --repo example.com/hostile >/dev/null 2>&1 &&
  "$BIN" create api --group big --version v1 --kind Big --controller=false >/dev/null 2>&1)

# Writes the addition of shape $1 to stdout.
generate() {
  python3 - "$1" "$MB" <<'PY'
import sys
shape, mb = sys.argv[1], int(sys.argv[2])
limit = mb * 1_000_000
out = sys.stdout
n = 0
def w(s):
    global n
    out.write(s)
    n += len(s)
if shape == "doc":
    line = "/// " + ("lorem ipsum dolor sit amet " * 4)[:95] + "\n"
    while n < limit:
        w(line)
    w("pub struct Documented;\n")
elif shape == "strings":
    body = ("abcdefghij" * 100)
    i = 0
    while n < limit:
        w(f'pub const S{i}: &str = "{body}";\n')
        i += 1
elif shape == "items":
    i = 0
    while n < limit:
        w(f"pub struct Item{i} {{\n    pub a: i32,\n    pub b: Option<String>,\n    pub c: Vec<u8>,\n}}\n")
        i += 1
elif shape == "exprs":
    i = 0
    deep = "(" * 30 + "1" + " + 2)" * 30
    chain = " + ".join(["3 * 4 - 5"] * 20)
    while n < limit:
        w(f"pub const E{i}: i64 = {deep} + {chain};\n")
        i += 1
elif shape == "line":
    w("pub const L: &[u32] = &[")
    i = 0
    while n < 10_000_000:
        w(f"{i % 100000}, ")
        i += 1
    w("0];\n")
PY
}

printf '| shape | source added | lines | exit | wall | peak RSS |\n|---|---|---|---|---|---|\n'
for shape in doc strings items exprs line; do
  dir="$WORK/$shape"
  cp -r "$WORK/base" "$dir"
  generate "$shape" >>"$dir/src/api/v1/big_types.rs"
  bytes=$(stat -c %s "$dir/src/api/v1/big_types.rs")
  lines=$(wc -l <"$dir/src/api/v1/big_types.rs")
  set +e
  (cd "$dir" && /usr/bin/time -v "$BIN" manifests --evaluate static >/dev/null 2>"$WORK/err")
  code=$?
  set -e
  rss_kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$WORK/err")
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$WORK/err")
  if [ "$code" != 0 ]; then
    grep -m1 '^error' "$WORK/err" >&2 || true
  fi
  printf '| %s | %s MB | %s | %s | %s | %s MiB |\n' "$shape" "$((bytes / 1000000))" "$lines" "$code" "$wall" "$((rss_kb / 1024))"
  rm -rf "$dir"
done
