#!/usr/bin/env bash
# check-architecture.sh [--baseline FILE] SRC_DIR BUILD_DIR
#
# With --baseline FILE (violation lines as this script prints them; line
# numbers, line counts and parenthesised details are ignored; a line that
# starts with "#" is a comment): the violations it lists are
# allowed and only counted; any other violation fails, and so does a listed
# one that no longer occurs (STALE), so the list can only shrink. That is
# how the suite can run the checks while issue 21 is being worked through.
#
# The checks of issue 21 ("Proof") that keep trowel's shape from drifting.
# Each violation is printed as "CHECK: file: detail", then a summary line per
# check; the exit status is 0 only when there is none (1: violations, 2:
# usage or a missing tool/build).
#
#   FORBIDDEN     src/format and src/export call no open/fopen/openat/stat/
#                 lstat/fstatat/opendir/fdopendir/mkstemp/mkostemp/tmpfile/
#                 realpath and no trowel_input_open_file/trowel_open_beside
#                 (comments and strings are ignored): files reach a format
#                 only through the I/O seam.
#   RAW-READ      src/format and src/export read input bytes only through the
#                 bounded reader: no trowel_input_copy/_span/_file_at, pread,
#                 read, fread, mmap, lseek (VPP's copy_at today).
#   LAST-ERROR    src/format and src/export never read ctx->last_error.status
#                 (errors travel with the call's return value).
#   MUTUAL        no two object files of the library (trowel_objects) each
#                 use a symbol the other defines (read with nm; registry.c,
#                 which names every module, is the one exception).
#   LAYER         no layer uses a higher one: core(0) < codec(1) < export(2)
#                 < format(3); registry.c sits above them all. Read twice:
#                 from the objects (nm) and from the #include lines. cli/
#                 includes no header under src/.
#   FAMILY        no file of one family (src/format/<family>/) includes a header
#                 of another or uses a symbol another family's objects define:
#                 families meet only in core, codec and export.
#   OPTION-PARSE  src/format and src/export parse no -O value with strto*/
#                 ato*/sscanf (a value from trowel_options_get parsed in the
#                 same function): core checks values against the typed rows.
#   LENGTH        no file under src/ or cli/ is over 1300 lines.
#   INCLUDE-CYCLE no cycle in the #include graph of the source files (.c, .h,
#                 .inc under src/, cli/, include/), reported once per cycle;
#                 MODULE-CYCLE: the same graph with X.c and X.h taken as one
#                 module X, headers without a .c seen through (a.c includes
#                 b.h and b.c includes a.h: the pair the issue forbids).
#   CORE-FORMAT   src/core includes no header of src/format (or src/export)
#                 and names no format object (trowel_format_<id>).
#   STATIC-EXPORT nm of the static library shows only global symbols that
#                 start with trowel_ and are declared in trowel.h.
#   CLI-INTERNAL  the CLI's objects use only symbols trowel.h declares (the
#                 CLI is a thin client of the public API): what would fail to
#                 link against a public-only static library.
#
# Needs python3 and nm (binutils). BUILD_DIR must hold a build (cmake
# --build) of SRC_DIR; the nm checks are skipped with a message (and count
# as failures) when its objects are missing.
#
# ---- Making the static library export only the public API (proposal,
# tried in a scratch build: see docs/plan-architecture.md, "Static library")
#
#   # one relocatable object of the whole library, its internal globals made
#   # local (the sources are compiled with -fvisibility=hidden and trowel.h
#   # marks the API visible, so "hidden" is exactly "internal"):
#   add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/trowel_public.o
#     COMMAND ${CMAKE_LINKER} -r -o trowel_all.o $<TARGET_OBJECTS:trowel_objects>
#     COMMAND ${CMAKE_OBJCOPY} --localize-hidden trowel_all.o trowel_public.o
#     DEPENDS trowel_objects COMMAND_EXPAND_LISTS VERBATIM)
#   add_library(trowel_static STATIC ${PROJECT_BINARY_DIR}/trowel_public.o)
#   set_source_files_properties(trowel_public.o PROPERTIES EXTERNAL_OBJECT ON GENERATED ON)
#   # tests and fuzzers, which use internals, link trowel_objects (the
#   # object library) instead of trowel_static; the CLI links trowel_static
#   # and so proves it is a client of trowel.h only.
set -euo pipefail

BASELINE=
if [ "${1:-}" = --baseline ]; then
    BASELINE=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
    shift 2
fi
if [ $# -ne 2 ]; then
    echo "usage: $0 [--baseline FILE] SRC_DIR BUILD_DIR" >&2
    exit 2
fi
SRC=$(cd "$1" && pwd)
BUILD=$(cd "$2" 2>/dev/null && pwd || echo "$2")
command -v python3 >/dev/null || { echo "check-architecture: python3 is needed" >&2; exit 2; }
command -v "${NM:-nm}" >/dev/null || { echo "check-architecture: nm is needed" >&2; exit 2; }

exec python3 - "$SRC" "$BUILD" "${NM:-nm}" "$BASELINE" <<'PYEOF'
import os, re, subprocess, sys
from collections import defaultdict

SRC, BUILD, NM, BASELINE = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
MAX_LINES = 1300
CHECKS = ["FORBIDDEN", "RAW-READ", "LAST-ERROR", "OPTION-PARSE", "MUTUAL", "LAYER", "FAMILY", "LENGTH", "INCLUDE-CYCLE", "MODULE-CYCLE",
          "CORE-FORMAT", "STATIC-EXPORT", "CLI-INTERNAL"]
violations = defaultdict(list)
skipped = []

def report(check, path, detail):
    violations[check].append((path, detail))

def rel(p):
    return os.path.relpath(p, SRC)

def source_files(dirs, exts=(".c", ".h", ".inc")):
    out = []
    for d in dirs:
        top = os.path.join(SRC, d)
        for root, _, files in os.walk(top):
            for f in files:
                if f.endswith(exts):
                    out.append(os.path.join(root, f))
    return sorted(out)

def strip_c(text):
    """Comments and string/char literals blanked out, newlines kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i)); i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * max(0, j - i - 2) + (c if j - i >= 2 else "")); i = j
        else:
            out.append(c); i += 1
    return "".join(out)

def read(p):
    with open(p, encoding="utf-8", errors="replace") as f:
        return f.read()

# ---------------------------------------------------------------- layers
LAYERS = {"core": 0, "codec": 1, "export": 2, "format": 3}
LAYER_NAME = {v: k for k, v in LAYERS.items()}
TOP = 9  # registry.c: names every module

def layer_of(relpath):
    parts = relpath.split(os.sep)
    if parts[0] != "src" or len(parts) < 3:
        return None
    if parts[1] == "core" and parts[-1].startswith("registry."):
        return TOP
    return LAYERS.get(parts[1])

# A name followed by "(" is a call unless a type or declarator word comes
# just before it (a prototype: "int open(const char *, int);").
CALL_WORDS = {"return", "else", "do", "case", "sizeof"}
def is_call(line, m):
    before = re.search(r"(\w+)\s*\**\s*$", line[:m.start()])
    return not before or before.group(1) in CALL_WORDS

# ------------------------------------------------------------- FORBIDDEN
FORBIDDEN = ["open", "fopen", "freopen", "openat", "openat2", "creat", "stat", "lstat", "fstatat",
             "statx", "opendir", "fdopendir", "mkstemp", "mkostemp", "mkstemps", "mkdtemp",
             "tmpfile", "realpath", "trowel_input_open_file", "trowel_open_beside",
             "trowel_sink_open_file", "trowel_outdir_open"]
forbidden_re = re.compile(r"(?<![\w.>])(" + "|".join(FORBIDDEN) + r")\s*\(")
for p in source_files(["src/format", "src/export"]):
    text = strip_c(read(p))
    for ln, line in enumerate(text.split("\n"), 1):
        if line.lstrip().startswith("#"):
            continue
        for m in forbidden_re.finditer(line):
            if not is_call(line, m):
                continue
            report("FORBIDDEN", f"{rel(p)}:{ln}", f"calls {m.group(1)}()")

# -------------------------------------------------------------- RAW-READ
# Parsers read through the bounded reader (trowel_reader_*), never around it.
raw_re = re.compile(r"(?<![\w.>])(trowel_input_copy|trowel_input_span|trowel_input_file_at|pread|pread64|"
                    r"read|fread|mmap|lseek|fseek)\s*\(")
for p in source_files(["src/format", "src/export"]):
    text = strip_c(read(p))
    for ln, line in enumerate(text.split("\n"), 1):
        if line.lstrip().startswith("#"):
            continue
        for m in raw_re.finditer(line):
            if not is_call(line, m):
                continue
            report("RAW-READ", f"{rel(p)}:{ln}", f"calls {m.group(1)}() instead of the bounded reader")

# ------------------------------------------------------------ LAST-ERROR
# Errors travel with the call: a format returns the status it was given,
# it does not fish it back out of the context after a NULL or false.
for p in source_files(["src/format", "src/export"]):
    text = strip_c(read(p))
    for ln, line in enumerate(text.split("\n"), 1):
        if re.search(r"last_error\s*\.\s*status", line):
            report("LAST-ERROR", f"{rel(p)}:{ln}", "reads ctx->last_error.status")

# ---------------------------------------------------------- OPTION-PARSE
# -O values are checked by core against the format's typed rows and read
# with the typed getters (core/options.c); a format does not parse them
# again. Caught: a variable set from trowel_options_get and handed to a
# number parser in the same function (functions end at a "}" in column 0).
# File text parsed with strto* (vsif.c, choreo_vcd.c) is not caught, nor is
# an option's text passed on to another function that parses it.
NUMBER_PARSERS = r"strtoul|strtol|strtoll|strtoull|strtod|strtof|atoi|atol|atoll|atof|sscanf"
for p in source_files(["src/format", "src/export"]):
    text = strip_c(read(p))
    option_vars = set()
    for ln, line in enumerate(text.split("\n"), 1):
        if line.startswith("}"):
            option_vars = set()
            continue
        m = re.search(r"(\w+)\s*=\s*trowel_options_get\s*\(", line)
        if m:
            option_vars.add(m.group(1))
        for m in re.finditer(r"(?<![\w.>])(" + NUMBER_PARSERS + r")\s*\(\s*(\w+)", line):
            if m.group(2) in option_vars:
                report("OPTION-PARSE", f"{rel(p)}:{ln}",
                       f"parses -O {m.group(2)} with {m.group(1)}() (type its row instead)")

# ---------------------------------------------------------------- LENGTH
for p in source_files(["src", "cli"]):
    n = read(p).count("\n")
    if n > MAX_LINES:
        report("LENGTH", rel(p), f"{n} lines (limit {MAX_LINES})")

# --------------------------------------------------------- include graph
inc_re = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
all_files = source_files(["src", "cli", "include"])
known = set(all_files)
graph = defaultdict(set)
for p in all_files:
    for m in inc_re.finditer(read(p)):
        name = m.group(1)
        for base in (os.path.dirname(p), os.path.join(SRC, "src"), os.path.join(SRC, "include"),
                     os.path.join(SRC, "cli")):
            cand = os.path.normpath(os.path.join(base, name))
            if cand in known:
                graph[p].add(cand)
                break

def sccs(nodes, edges):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)
    def visit(v):
        index[v] = low[v] = counter[0]; counter[0] += 1
        stack.append(v); on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out

def cycle_path(comp, edges):
    """One cycle through the component's first node, as a list."""
    start = comp[0]; members = set(comp)
    prev, queue, seen = {}, [start], {start}
    while queue:
        v = queue.pop(0)
        for w in sorted(edges.get(v, ())):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w in members and w not in seen:
                seen.add(w); prev[w] = v; queue.append(w)
    return comp

for comp in sccs(set(all_files) | set(graph), graph):
    if len(comp) > 1 or comp[0] in graph.get(comp[0], ()):
        path = cycle_path(comp, graph)
        report("INCLUDE-CYCLE", rel(comp[0]), " -> ".join(rel(x) for x in path)
               + (f" ({len(comp)} files in the cycle)" if len(comp) > len(path) - 1 else ""))

def module_of(p):
    return os.path.splitext(p)[0]
# Modules with an implementation (X.c, with or without X.h). A header with
# no .c of its own (core.h, module.h, choreo_model.h) is seen through: an
# include of it counts as including what it includes.
real = {module_of(p) for p in all_files if p.endswith(".c")}
mgraph = defaultdict(set)
for m in sorted(real):
    todo = [f for f in all_files if module_of(f) == m]
    seen = set(todo)
    while todo:
        f = todo.pop()
        for d in graph.get(f, ()):
            md = module_of(d)
            if md in real:
                if md != m:
                    mgraph[m].add(md)
            elif d not in seen:
                seen.add(d); todo.append(d)
for comp in sccs(real, mgraph):
    if len(comp) > 1:
        path = cycle_path(comp, mgraph)
        report("MODULE-CYCLE", rel(comp[0]), " -> ".join(rel(x) for x in path)
               + (f" (a knot of {len(comp)} modules: " + ", ".join(rel(x) for x in comp) + ")"
                  if len(comp) > len(path) - 1 else ""))

# ---------------------------------------------- LAYER (include) and CORE
fmt_obj_re = re.compile(r"\btrowel_format_\w+\b")
public_fns = None  # filled below
for p, deps in sorted(graph.items()):
    lp = layer_of(rel(p))
    if lp is None:
        continue
    for d in sorted(deps):
        ld = layer_of(rel(d))
        if ld is not None and ld != TOP and lp != TOP and ld > lp:
            report("LAYER", rel(p), f"includes {rel(d)} ({LAYER_NAME[lp]} -> {LAYER_NAME[ld]})")
        if lp == LAYERS["core"] and rel(d).startswith(("src/format", "src/export")):
            report("CORE-FORMAT", rel(p), f"includes {rel(d)}")

# families never include each other's headers
def family_of(relpath):
    parts = relpath.split(os.sep)
    return parts[2] if len(parts) > 3 and parts[0] == "src" and parts[1] == "format" else None
for p, deps in sorted(graph.items()):
    fp = family_of(rel(p))
    for d in sorted(deps):
        fd = family_of(rel(d))
        if fp and fd and fd != fp:
            report("FAMILY", rel(p), f"includes {rel(d)} ({fp} -> {fd})")

# the CLI is a client of trowel.h: it includes no library-internal header
for p, deps in sorted(graph.items()):
    if rel(p).startswith("cli" + os.sep):
        for d in sorted(deps):
            if rel(d).startswith("src" + os.sep):
                report("LAYER", rel(p), f"includes {rel(d)} (cli -> library internals)")

# ---------------------------------------------------------- public names
def public_names():
    text = strip_c(read(os.path.join(SRC, "include/trowel/trowel.h")))
    names = set(re.findall(r"\b(trowel_\w+)\s*\(", text))
    names |= set(re.findall(r"\bextern\b[^;(]*?\b(trowel_\w+)\s*(?:\[[^\]]*\])?\s*;", text))
    return names
public = public_names()

# core naming a format object (a format's `const trowel_format` in core)
for p in source_files(["src/core"]):
    if layer_of(rel(p)) == TOP:
        continue
    text = strip_c(read(p))
    for ln, line in enumerate(text.split("\n"), 1):
        for m in re.finditer(r"\b(trowel_format_(?!option_at|caps|id|family|description|extensions|create_options|convert_targets|folder_targets|targets|at|count|by_id|find|is_folder_target)\w+)\b", line):
            report("CORE-FORMAT", f"{rel(p)}:{ln}", f"names the format object {m.group(1)}")

# ------------------------------------------------------------ nm checks
def nm(path, *flags):
    r = subprocess.run([NM, *flags, path], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    return r.stdout

DEFINED = set("TDBRGSVWiu")
def symbols(obj):
    """(defined globals, undefined) of one object file."""
    d, u = set(), set()
    for line in nm(obj, "-P", "-g").splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            u.add(name)
        elif kind in DEFINED or kind in "vw":
            d.add(name)
    return d, u

objdir = os.path.join(BUILD, "CMakeFiles", "trowel_objects.dir")
objs = []
for root, _, files in os.walk(objdir):
    for f in files:
        if f.endswith(".o"):
            objs.append(os.path.join(root, f))
objs.sort()

def obj_source(o):
    return os.path.relpath(o, objdir)[:-2]  # src/core/archive.c

if not objs:
    skipped.append(f"no objects in {objdir}: MUTUAL, LAYER (nm), STATIC-EXPORT, CLI-INTERNAL not run")
else:
    defs, uses, owner = {}, {}, {}
    for o in objs:
        s = obj_source(o)
        defs[s], uses[s] = symbols(o)
        for name in defs[s]:
            owner[name] = s
    use = defaultdict(lambda: defaultdict(set))  # use[a][b] = symbols a takes from b
    for a, us in uses.items():
        for name in us:
            b = owner.get(name)
            if b and b != a:
                use[a][b].add(name)
    for a in sorted(use):
        for b in sorted(use[a]):
            if a < b and a in use[b]:
                if layer_of(a) == TOP or layer_of(b) == TOP:
                    continue
                ab = sorted(use[a][b]); ba = sorted(use[b][a])
                report("MUTUAL", a, f"uses {b} ({', '.join(ab[:4])}{', ...' if len(ab) > 4 else ''})"
                       f" and {b} uses it ({', '.join(ba[:4])}{', ...' if len(ba) > 4 else ''})")
    for a in sorted(use):
        la = layer_of(a)
        for b in sorted(use[a]):
            lb = layer_of(b)
            if la is None or lb is None or la == TOP or lb == TOP:
                continue
            if lb > la:
                names = sorted(use[a][b])
                report("LAYER", a, f"uses {b} ({LAYER_NAME[la]} -> {LAYER_NAME[lb]}): "
                       + ", ".join(names[:5]) + (", ..." if len(names) > 5 else ""))

    for a in sorted(use):
        for b in sorted(use[a]):
            fa, fb = family_of(a), family_of(b)
            if fa and fb and fa != fb:
                names = sorted(use[a][b])
                report("FAMILY", a, f"uses {b} ({fa} -> {fb}): "
                       + ", ".join(names[:5]) + (", ..." if len(names) > 5 else ""))

    lib = os.path.join(BUILD, "libtrowel.a")
    if not os.path.exists(lib):
        skipped.append(f"no {lib}: STATIC-EXPORT not run")
    else:
        seen = set()
        for line in nm(lib, "-P", "-g", "--defined-only").splitlines():
            parts = line.split()
            if len(parts) < 2 or parts[0].endswith(":") or parts[0].endswith("]:"):
                continue
            name = parts[0]
            if name in seen:
                continue
            seen.add(name)
            if name not in public:
                where = owner.get(name, "?")
                why = "not declared in trowel.h" if name.startswith("trowel_") else "no trowel_ prefix"
                report("STATIC-EXPORT", where, f"{name}: {why}")

    clidir = os.path.join(BUILD, "CMakeFiles", "trowel.dir")
    cli_objs = []
    for root, _, files in os.walk(clidir):
        cli_objs += [os.path.join(root, f) for f in files if f.endswith(".o")]
    if not cli_objs:
        skipped.append(f"no objects in {clidir}: CLI-INTERNAL not run")
    for o in sorted(cli_objs):
        _, us = symbols(o)
        for name in sorted(us):
            if name in owner and name not in public:
                report("CLI-INTERNAL", os.path.relpath(o, clidir)[:-2],
                       f"uses {name} (defined in {owner[name]}, not in trowel.h)")

# ---------------------------------------------------------------- output
def normal(line):
    """A violation line without line numbers, counts and symbol lists, so
    that a baseline survives edits that do not fix or add a violation."""
    line = re.sub(r":\d+(?=:)", "", line.strip())
    line = re.sub(r"\b\d+ lines\b", "N lines", line)
    return re.sub(r" \([^()]*\)", "", line)

allowed = defaultdict(int)
if BASELINE:
    for line in read(BASELINE).splitlines():
        line = line.split("#", 1)[0].strip() if line.lstrip().startswith("#") else line.strip()
        if line:
            allowed[normal(line)] += 1

total = new_count = 0
counts, kept = defaultdict(int), defaultdict(int)
for check in CHECKS:
    for path, detail in violations.get(check, []):
        line = f"{check}: {path}: {detail}"
        total += 1
        counts[check] += 1
        if allowed.get(normal(line), 0) > 0:
            allowed[normal(line)] -= 1
            kept[check] += 1
            continue
        new_count += 1
        print(line)
stale = [(k, n) for k, n in allowed.items() if n > 0]
for k, n in sorted(stale):
    for _ in range(n):
        print(f"STALE: {k} (in the baseline, no longer found: delete the line)")
print()
print("summary:" + (f" (baseline {BASELINE})" if BASELINE else ""))
for check in CHECKS:
    extra = f" ({kept[check]} allowed by the baseline)" if BASELINE else ""
    print(f"  {check:14s} {counts[check]}{extra}")
for s_ in skipped:
    print(f"  skipped: {s_}")
print(f"  total          {total}")
if BASELINE:
    print(f"  new            {new_count}")
    print(f"  stale          {sum(n for _, n in stale)}")
failed = new_count or skipped or (BASELINE and stale)
sys.exit(1 if failed else 0)
PYEOF
