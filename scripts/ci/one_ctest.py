#!/usr/bin/env python3
"""one_ctest.py OUT_DIR --suite BUILD_DIR PREFIX NAMES_FILE [--env PREFIX VAR=VALUE] ...

Writes OUT_DIR/CTestTestfile.cmake: the tests of several build directories in one ctest queue,
each named PREFIX/name, with all its properties, so one `ctest -j` runs them all and no build's
tests wait for another's to end (two ctest runs one after the other each ended on its longest
test with a core idle; on 2 cores the one queue alone was about as busy, 89.6%, and the slot
scripts/test.sh adds to its resource specification is what filled the cores).  NAMES_FILE lists
the tests of BUILD_DIR to take, a name a line; --env adds VAR=VALUE to the environment of every
test of PREFIX's suite.

Each suite is read from `ctest --show-only=json-v1` in its build directory (ctest's documented
machine-readable form: commands, working directories and properties), not from CMake's generated
files.  A property this script does not know stops it, so nothing a test declares is dropped.

ENVIRONMENT_MODIFICATION is tests/lib/caller_env.cmake's (it takes the caller's AWS_*, INSTBENCH_*,
... away from every test, by name, each time ctest reads the tests; tests/CMakeLists.txt refuses a
test that sets its own): what json-v1 shows is what this script's caller had set, so the queue runs
caller_env.cmake again instead, when ctest reads it."""
import argparse
import json
import os
import subprocess
import sys

CALLER_ENV = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tests", "lib",
                          "caller_env.cmake")
# Properties copied as they are: a scalar, or a list joined with ';'.
PLAIN = {"ENVIRONMENT", "WORKING_DIRECTORY", "TIMEOUT", "COST", "LABELS", "SKIP_RETURN_CODE",
         "PASS_REGULAR_EXPRESSION", "FAIL_REGULAR_EXPRESSION", "WILL_FAIL", "PROCESSORS", "RUN_SERIAL",
         "RESOURCE_LOCK", "TIMEOUT_AFTER_MATCH"}


def quote(value):
    """VALUE as one quoted CMake argument (nothing in it expanded)."""
    text = str(value)
    for a, b in (("\\", "\\\\"), ('"', '\\"'), ("$", "\\$"), ("\n", "\\n")):
        text = text.replace(a, b)
    return '"%s"' % text


def listed(values):
    """A CMake list of VALUES (a ';' inside one is escaped, so it stays one element)."""
    return ";".join(str(v).replace(";", "\\;") for v in values)


def resource_groups(groups):
    """json-v1's RESOURCE_GROUPS (a group of N lists N times) back into the property's text:
    "cores:1", "gpus:1,mem:2;gpus:1,mem:2"."""
    return ";".join(",".join("%s:%d" % (r[".type"], r["slots"]) for r in g["requirements"]) for g in groups)


def suite_lines(build, prefix, names, env, shared):
    p = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("one_ctest: ctest --show-only=json-v1 in %s failed: %s" % (build, p.stderr.strip()))
    tests = {t["name"]: t for t in json.loads(p.stdout)["tests"]}
    missing = sorted(set(names) - set(tests))
    if missing:
        sys.exit("one_ctest: %s has no test named %s" % (build, ", ".join(missing)))
    lines, scrub = [], []
    for name in names:
        t = tests[name]
        if not t.get("command"):
            sys.exit("one_ctest: %s in %s has no command (its program was not built?)" % (name, build))
        full = "%s/%s" % (prefix, name)
        lines.append("add_test(%s %s)" % (quote(full), " ".join(quote(a) for a in t["command"])))
        props = []
        # list properties this script adds to, whether or not the test has them: the suite's
        # environment, and a lock for a test in more than one suite, which never runs beside
        # itself (the two ran in turn before, and may share a path or a port in the source tree)
        added = {"ENVIRONMENT": env, "RESOURCE_LOCK": ["same test %s" % name] if name in shared else []}
        own = list(env)   # the variables the test sets itself, which caller_env.cmake leaves
        for prop in t.get("properties", []):
            key, value = prop["name"], prop["value"]
            if key == "ENVIRONMENT_MODIFICATION":   # caller_env.cmake's, run again below
                continue
            if key == "ENVIRONMENT":
                own += value
            if key in added:
                value = list(value) + added.pop(key)
            if key == "RESOURCE_GROUPS":
                props.append("%s %s" % (key, quote(resource_groups(value))))
            elif key in PLAIN:
                props.append("%s %s" % (key, quote(listed(value) if isinstance(value, list) else
                                                  ("ON" if value is True else "OFF" if value is False else value))))
            else:
                sys.exit("one_ctest: %s in %s has property %s, which this script does not carry over"
                         % (name, build, key))
        props += ["%s %s" % (key, quote(listed(value))) for key, value in added.items() if value]
        if props:
            lines.append("set_tests_properties(%s PROPERTIES %s)" % (quote(full), " ".join(props)))
        scrub.append("instbench_scrub_caller_env(%s)" % " ".join(quote(a) for a in
                                                                  [full] + [v.split("=", 1)[0] for v in own]))
    return lines, scrub


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--suite", nargs=3, action="append", required=True, metavar=("BUILD_DIR", "PREFIX", "NAMES_FILE"))
    ap.add_argument("--env", nargs=2, action="append", default=[], metavar=("PREFIX", "VAR=VALUE"))
    a = ap.parse_args()
    lines = ["# GENERATED by scripts/ci/one_ctest.py: the tests of %s in one queue"
             % ", ".join(s[0] for s in a.suite)]
    suites = []
    for build, prefix, names_file in a.suite:
        with open(names_file) as f:
            suites.append((build, prefix, [n.strip() for n in f if n.strip()]))
    seen, shared = set(), set()
    for _, _, names in suites:
        shared |= seen & set(names)
        seen |= set(names)
    scrub = ["include(%s)" % quote(CALLER_ENV)]   # after the tests: it sets their properties
    for build, prefix, names in suites:
        env = [v for p, v in a.env if p == prefix]
        more, more_scrub = suite_lines(build, prefix, names, env, shared)
        lines += more
        scrub += more_scrub
    lines += scrub
    os.makedirs(a.out, exist_ok=True)
    tmp = os.path.join(a.out, "CTestTestfile.cmake.tmp")
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, os.path.join(a.out, "CTestTestfile.cmake"))


if __name__ == "__main__":
    main()
