#!/usr/bin/python3
"""Sizes a newcomer can read: no source file over 800 lines, no function over 150 without a reason.

usage: check_source_size.py [--except PATH]... [--files-only] DIR...
       check_source_size.py --self-test

Walks each DIR for C, C++ and CUDA sources (.c .h .cu .cuh .cpp) and scripts (.py .sh) and prints
  - every file longer than MAX_FILE_LINES lines, and
  - every C, C++ or CUDA function longer than MAX_FUNCTION_LINES lines (from the first line of its
    signature to its closing brace) whose comment directly above does not give a reason as
    `long: <reason>` (not with --files-only),
one line each, then exits 1 when there is any (0 otherwise).  With -v it also lists the long
functions that do give a reason.  --except PATH leaves one file out (PATH as the walk names it:
DIR joined with the path below it, as printed).

A function is found the way the project writes one: its body opens with '{' at column 0 (or its
signature, at column 0, ends in '{') and closes with '}' at column 0; the signature is the lines
from the one at column 0 down to the brace.  Initialisers (`= {`), structs, enums and namespaces
are not functions.
"""
import os
import re
import sys
import tempfile

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 150
SUFFIXES = (".c", ".h", ".cu", ".cuh", ".cpp")
SCRIPT_SUFFIXES = (".py", ".sh")   # the file cap only: functions are found as C writes them
MARKER = re.compile(r"\blong:\s*\w")   # a reason: words after it, not the comment's end
NOT_FUNCTION = re.compile(r"^(typedef|struct|enum|union|namespace|extern\s+\"C\")\b")


def comment_above(lines, i):
    """The comment lines directly above line I (none when a code or blank line comes first)."""
    out = []
    j = i - 1
    while j >= 0:
        s = lines[j].strip()
        if s.startswith(("/*", "*", "//")) or s.endswith("*/"):
            out.append(s)
            j -= 1
            continue
        break
    return "\n".join(reversed(out))


def functions(lines):
    """(first line index, line count, signature) of each function in LINES."""
    start = None
    for i, line in enumerate(lines):
        opens_alone = line.startswith("{")
        opens_at_end = (re.match(r"[A-Za-z_]", line) and line.rstrip().endswith("{") and "=" not in line
                        and not NOT_FUNCTION.match(line))
        if start is None and (opens_alone or opens_at_end):
            j = i - 1 if opens_alone else i
            while j > 0 and lines[j][:1] in (" ", "\t"):   # a signature's continuation lines
                j -= 1
            start = j
        elif start is not None and line.startswith("}"):
            yield start, i - start + 1, lines[start].strip()
            start = None


def check(paths, excepted=(), verbose=False, out=sys.stdout, files_only=False):
    """Prints the findings under PATHS; returns how many there are."""
    found = 0
    for top in paths:
        for root, dirs, files in os.walk(top):
            dirs.sort()
            for name in sorted(files):
                if not name.endswith(SUFFIXES + SCRIPT_SUFFIXES):
                    continue
                path = os.path.join(root, name)
                if path in excepted:
                    continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    lines = f.read().split("\n")
                n = len(lines) - (lines[-1] == "")
                if n > MAX_FILE_LINES:
                    print("%s: %d lines (at most %d: split it along a seam)" % (path, n, MAX_FILE_LINES), file=out)
                    found += 1
                if files_only or name.endswith(SCRIPT_SUFFIXES):
                    continue
                for first, count, sig in functions(lines):
                    if count <= MAX_FUNCTION_LINES:
                        continue
                    if MARKER.search(comment_above(lines, first)):
                        if verbose:
                            print("%s:%d: %d lines, with a reason: %s" % (path, first + 1, count, sig), file=out)
                        continue
                    print("%s:%d: function of %d lines (at most %d without `long: <reason>` in the comment "
                          "above it): %s" % (path, first + 1, count, MAX_FUNCTION_LINES, sig), file=out)
                    found += 1
    return found


def self_test():
    """The check finds what it must and nothing else, on files made here."""
    body = ["    x++;"] * (MAX_FUNCTION_LINES - 3)   # signature + '{' + body + '}' = MAX lines
    cases = {
        "ok.c": ["/* fits */", "int f(int x)", "{"] + body + ["}"],
        "long.c": ["/* no reason */", "static int g(int x,", "             int y)", "{"] + body + ["    y++;", "}"],
        "reason.c": ["/* long: a reason */", "int h(int x)", "{"] + body + ["    x++;", "}"],
        "big.h": ["int a%d;" % i for i in range(MAX_FILE_LINES + 1)],
        "edge.h": ["int a%d;" % i for i in range(MAX_FILE_LINES)],
        "table.c": ["static const int t[] = {"] + ["    1,"] * 200 + ["};"],
        "same_line.cu": ["__global__ void k(int x) {"] + body + ["    x++;", "    x++;", "}"],
        "no_reason.c": ["/* a long function; long: */", "int n(int x)", "{"] + body + ["    x++;", "}"],
        "apart.c": ["/* long: a reason, but for nothing below */", "", "int p(int x)", "{"] + body + ["    x++;", "}"],
        "big.py": ["x%d = 0" % i for i in range(MAX_FILE_LINES + 1)],
        "edge.py": ["x%d = 0" % i for i in range(MAX_FILE_LINES)],
        "big.sh": ["echo %d" % i for i in range(MAX_FILE_LINES + 1)],
        "long_def.py": ["def f(x):", "{"] + body * 2 + ["}"],   # no C function rule for a script
    }
    with tempfile.TemporaryDirectory() as d:
        for name, lines in cases.items():
            with open(os.path.join(d, name), "w") as f:
                f.write("\n".join(lines) + "\n")
        import io
        buf = io.StringIO()
        n = check([d], out=buf)
        text = buf.getvalue()
        want = ["/long.c:2: function of 152 lines", "big.h: 801 lines", "same_line.cu:1: function of 151 lines",
                "no_reason.c:2: function of 151 lines", "apart.c:3: function of 151 lines", "big.py: 801 lines",
                "big.sh: 801 lines"]
        missing = [w for w in want if w not in text]
        extra = [line for line in text.splitlines() if not any(w in line for w in want)]
        if missing or extra or n != len(want):
            print("self-test FAILED\nmissing: %s\nunexpected: %s\noutput:\n%s" % (missing, extra, text))
            return 1
        buf = io.StringIO()
        if check([d], excepted={os.path.join(d, f) for f in ("big.h", "long.c", "same_line.cu", "no_reason.c",
                                                              "apart.c", "big.py", "big.sh")}, out=buf) != 0:
            print("self-test FAILED: --except did not leave the files out:\n" + buf.getvalue())
            return 1
        buf = io.StringIO()
        n = check([d], files_only=True, out=buf)
        got = buf.getvalue()
        if n != 3 or not all(w in got for w in ("big.h: 801 lines", "big.py: 801 lines", "big.sh: 801 lines")):
            print("self-test FAILED: --files-only wants the three files over the cap, not:\n" + got)
            return 1
    print("self-test passed")
    return 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    excepted, paths, verbose, files_only = set(), [], False, False
    it = iter(argv)
    for a in it:
        if a == "--except":
            excepted.add(next(it, ""))
        elif a == "-v":
            verbose = True
        elif a == "--files-only":
            files_only = True
        else:
            paths.append(a)
    if not paths:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    return 1 if check(paths, excepted, verbose, files_only=files_only) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
