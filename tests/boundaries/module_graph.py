#!/usr/bin/python3
"""The dependency graph the module boundaries promise, read from what the build produced.

usage: module_graph.py SRC_DIR [MODULE=DEP,DEP...]... ARCHIVE...
  ARCHIVE: build/libinstbench_<module>.a, one per module; MODULE=DEPS: the modules CMakeLists.txt
  lets MODULE use (its DEPS; "util=" for none)

1. No #include under SRC_DIR, or under the kernels/ beside it (the CUDA module's .cu files), names a
   header by a relative path (".."): with src/ on no include path, that is the one way around a
   module boundary the compiler would not refuse.
2. Modules: module A depends on B when an object of A uses a symbol defined in B.  A module uses
   no module its DEPS do not name (output renders for every domain and knows none: util alone),
   and the graph has no cycle (a cycle means two modules are one).
3. Files: the same inside every module, object by object: no two files of a module need each
   other (the AWS client's transport, credential chain, IMDS and plain requests once did).
Prints the module graph.  Exit 1 on a finding.
"""
import os
import re
import subprocess
import sys

SRC = sys.argv[1]
DECLARED = {a.split("=", 1)[0]: {d for d in a.split("=", 1)[1].split(",") if d} for a in sys.argv[2:] if "=" in a}
ARCHIVES = [a for a in sys.argv[2:] if "=" not in a]
failures = []

TOP = os.path.dirname(os.path.abspath(SRC))
for root, _, files in [w for top in (SRC, os.path.join(TOP, "kernels")) for w in os.walk(top)]:
    for f in files:
        if f.endswith((".c", ".h", ".cu", ".cuh")):
            path = os.path.join(root, f)
            for n, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if m and ".." in m.group(1).split("/"):
                    failures.append("%s:%d: relative include %s" % (os.path.relpath(path, TOP), n, m.group(1)))


def symbols(archive):
    """{object: (defined, undefined)} of one static library."""
    out = subprocess.run(["nm", "-A", "--defined-only", archive], capture_output=True, text=True, check=True).stdout
    und = subprocess.run(["nm", "-A", "--undefined-only", archive], capture_output=True, text=True, check=True).stdout
    objs = {}
    for text, kind in ((out, 0), (und, 1)):
        for line in text.splitlines():
            # "ARCHIVE:MEMBER.o:VALUE TYPE NAME" (defined) or "ARCHIVE:MEMBER.o:  U NAME"
            head, _, rest = line.rpartition(".o:")
            parts = rest.split()
            if kind == 0 and (len(parts) != 3 or parts[1] not in "TDBRV"):
                continue   # global definitions only (static ones cannot be reached)
            obj = head.rsplit(":", 1)[-1] + ".o"
            objs.setdefault(obj, (set(), set()))[kind].add(parts[-1])
    return objs


def cycle(graph):
    """One cycle of a {node: set(nodes)} graph as a list, or None (depth-first search)."""
    state, stack = {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


modules = {}
for a in ARCHIVES:
    name = re.sub(r"^libinstbench_|\.a$", "", os.path.basename(a))
    modules[name] = symbols(a)
owner = {}
for mod, objs in modules.items():
    for obj, (defs, _) in objs.items():
        for s in defs:
            owner[s] = (mod, obj)

mod_graph = {m: set() for m in modules}
uses = {}   # (module, module it uses) -> one symbol and the object using it, for the message
for mod, objs in modules.items():
    file_graph = {o: set() for o in objs}
    for obj, (_, undef) in objs.items():
        for s in undef:
            if s in owner:
                m, o = owner[s]
                if m != mod:
                    mod_graph[mod].add(m)
                    uses.setdefault((mod, m), (s, obj))
                elif o != obj:
                    file_graph[obj].add(o)
    c = cycle(file_graph)
    if c:
        failures.append("files of %s depend on each other in a cycle: %s" % (mod, " -> ".join(c)))
for mod in sorted(mod_graph):
    if mod not in DECLARED:
        continue
    for m in sorted(mod_graph[mod] - DECLARED[mod]):
        s, obj = uses[(mod, m)]
        failures.append("%s uses %s (%s in %s), which its DEPS in CMakeLists.txt do not name (%s)"
                        % (mod, m, s, obj, ", ".join(sorted(DECLARED[mod])) or "none"))
c = cycle(mod_graph)
if c:
    failures.append("modules depend on each other in a cycle: " + " -> ".join(c))

for m in sorted(mod_graph):
    print("%s -> %s" % (m, ", ".join(sorted(mod_graph[m])) or "(none)"))
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
