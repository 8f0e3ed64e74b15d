#!/usr/bin/env python3
"""Fails when the modules of a crate import each other in a cycle.

Usage: scripts/check-import-cycles.py [SRC_DIR ...]   (default: src runtime/src)

Each `.rs` file is a module (`a/mod.rs` is `a`, `a/b.rs` is `a::b`). A path that starts with
`crate::`, `super::` or `self::` (in a `use` tree or in code) is resolved to the deepest
module it names. Imports between a module and its own ancestors are the normal shape of a
Rust crate (a child uses its parent's types, a parent re-exports its children) and are not
counted. Any other import is counted between the two siblings under the modules' lowest
common ancestor: `a::x::f` using `a::y::g` is an arrow from `a::x` to `a::y`. A cycle of
those arrows is an import cycle: the two halves cannot be read, tested or moved apart.

Test code is left out: files named `tests.rs` or `*_tests.rs`, and everything from a
top-level `#[cfg(test)] mod name {` to the end of a file. Comments are left out too.

Prints each cycle with one `file:line` per arrow and exits 1; prints nothing and exits 0
when there is none.
"""

import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def module_of(root, path):
    rel = os.path.relpath(path, root)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib", "main"):
        rel = rel[:-1]
    return tuple(rel)


def strip(text):
    """The code of a file: comments blanked (lines kept), test code cut."""
    # Only an inline test module (`mod tests {`) runs to the end of the file; a
    # `#[cfg(test)] mod tests;` line names another file and the code after it still counts.
    m = re.search(
        r"^#\[cfg\(test\)\]\s*\n(?:#\[[^\n]*\]\s*\n)*mod\s+" + IDENT + r"\s*\{", text, re.M
    )
    if m:
        text = text[: m.start()]
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', text)
    return re.sub(r"//[^\n]*", "", text)


def use_paths(tree):
    """Expands a `use` tree (`crate::{a::b, c::{d, e}}`) into its paths."""
    tree = re.sub(r"\s+", "", tree)
    tree = re.sub(r"\bas" + IDENT, "", tree)

    def expand(s):
        i = s.find("{")
        if i < 0:
            return [s]
        prefix, body = s[:i], s[i + 1 : -1]
        parts, depth, cur = [], 0, ""
        for ch in body:
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
                continue
            depth += ch == "{"
            depth -= ch == "}"
            cur += ch
        parts.append(cur)
        return [p for part in parts if part for p in expand(prefix + part)]

    return expand(tree)


def references(text):
    """(line, path segments) of every crate-relative path in the code."""
    out = []
    for m in re.finditer(r"\buse\s+([^;]*);", text):
        line = text.count("\n", 0, m.start()) + 1
        for p in use_paths(m.group(1)):
            out.append((line, [s for s in p.split("::") if s]))
    # Paths in code (and in `use` statements, again: harmless).
    for m in re.finditer(r"\b((?:crate|super|self)(?:\s*::\s*" + IDENT + r")+)", text):
        line = text.count("\n", 0, m.start()) + 1
        out.append((line, re.sub(r"\s+", "", m.group(1)).split("::")))
    return out


def resolve(modules, here, segs):
    if not segs:
        return None
    if segs[0] == "crate":
        cur, segs = (), segs[1:]
    elif segs[0] in ("super", "self"):
        cur = here
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super":
                cur = cur[:-1]
            segs = segs[1:]
    elif here + (segs[0],) in modules:
        cur = here
    else:
        return None  # another crate, or a name in scope
    for s in segs:
        if cur + (s,) in modules:
            cur = cur + (s,)
        else:
            break
    return cur


def arrows(src):
    files = {}
    for dirpath, _, names in os.walk(src):
        for n in names:
            if n.endswith(".rs") and n != "tests.rs" and not n.endswith("_tests.rs"):
                p = os.path.join(dirpath, n)
                files[module_of(src, p)] = p
    modules = set(files)
    # Directories without a mod.rs (`a.rs` beside `a/`) are modules too.
    for m in list(modules):
        for i in range(len(m)):
            modules.add(m[:i])
    edges = {}
    for here, path in sorted(files.items()):
        with open(path, encoding="utf-8") as f:
            text = strip(f.read())
        for line, segs in references(text):
            there = resolve(modules, here, segs)
            if there is None:
                continue
            k = 0
            while k < min(len(here), len(there)) and here[k] == there[k]:
                k += 1
            if k == len(here) or k == len(there):
                continue  # ancestor and descendant
            a, b = here[: k + 1], there[: k + 1]
            edges.setdefault((a, b), f"{path}:{line}")
    return edges


def cycles(edges):
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    roots = sys.argv[1:] or [
        os.path.join(here, "..", "src"),
        os.path.join(here, "..", "runtime", "src"),
    ]
    found = 0
    for src in roots:
        edges = arrows(src)
        for comp in cycles(edges):
            found += 1
            names = ["::".join(m) for m in comp]
            print(f"import cycle in {os.path.normpath(src)}: {' <-> '.join(names)}")
            members = set(comp)
            for (a, b), where in sorted(edges.items()):
                if a in members and b in members:
                    print(f"  {'::'.join(a)} -> {'::'.join(b)}  ({os.path.normpath(where)})")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
