#!/usr/bin/env python3
"""Every instbench command line the docs show is one instbench accepts: the lines of README.md's,
docs/usage.md's, docs/cli.md's, docs/design.md's and docs/formats.md's code blocks (a `$ ` prompt
dropped, backslash continuations joined) and their inline code spans that start with instbench,
and the examples of every command's --help.  Each runs with the real binary, offline (testlib's
offline_env: no AWS credentials, IMDS off, HOME a scratch folder), and must not exit 2 (a usage
error), nor crash; an exit 1 (a runtime failure: here, most often no AWS) is printed with its
reason.  Lines the docs give as usage errors must exit 2 and say what the docs quote.

How a line runs here:
  - placeholders (FILE, USD, ID, s3://BUCKET/KEY, ...) become the values of PLACEHOLDERS;
  - a synopsis (`[--flag X]`, `a|b`) runs once per alternative, with every optional part given and
    its "more flags here" parts ([options], [-- MEASURE-FLAGS]) left out;
  - launchers (torchrun, srun) and environment assignments are peeled off, the launcher's
    environment for its first process given (tests/lib/shell_line.py); `| ...` and `> FILE` cut;
  - `measure` gets --dry-run (every check a run makes, no benchmark) and no probe step
    (INSTBENCH_PROBE_SECONDS=off): its flags are what is checked here, not the machine's speed;
  - `presign` gets AWS's documented example credentials (it signs locally, sends nothing);
    `sweep` a region but no credentials: its flags are read before credentials are looked for,
    so an accepted line ends in exit 1 "no AWS credentials found" and nothing reaches AWS;
  - a line that needs a GPU may exit 2 for that alone (shell_line.NEEDS_GPU), here or on a GPU
    host whose build has no CUDA: the flags before it were accepted;
  - the scratch folder holds result files (tests/rank/rank_fixtures.py, not instbench) where the
    docs rank them (instbench-results/, results/, seed/, a sweep's folder), tests/ (the verify
    references), and one sweep's state file, written here from docs/formats.md's
    instbench.sweep-state/v1 (and valid against its schema), so `sweep status ID` has a sweep to show.
Lines that name a command without being one (the subcommands' list, a flag named in prose, a
note quoted) are in SKIP, each with its reason, and printed as skipped; a message instbench prints
(`instbench CMD: ...`), quoted, is printed as such.  None of it runs long: a release run takes
seconds.
Usage: cli_doc_commands.py INSTBENCH REPO"""
import os
import re
import shlex
import subprocess
import sys

BIN, REPO = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
TESTS = os.path.join(REPO, "tests")
sys.path[:0] = [os.path.join(TESTS, d) for d in ("lib", "rank", "sweep")]
import rank_fixtures as fx  # noqa: E402
from shell_line import NEEDS_GPU, instbench_words  # noqa: E402
from state_schema import valid_state  # noqa: E402
from testlib import check, failures, offline_env, scratch_dir  # noqa: E402

DOCS = ["README.md", "docs/usage.md", "docs/cli.md", "docs/design.md", "docs/formats.md"]
SID = "20261125-213005-9f3a"   # a sweep ID of the documented shape, YYYYMMDD-HHMMSS-xxxx
# Placeholder -> what stands for it here, tried in this order, each as a whole word.
PLACEHOLDERS = [
    ("SPEC[,SPEC...]", "g5.xlarge:spot,4xg5.xlarge:spot"),
    ("--reference FILE", "--reference tests/data/ref_a_adam_fp32.safetensors"),
    ("FILE", "out.json"),
    ("<hostname>=USD", "workstation=0.30"),
    ("s3://BUCKET/KEY", "s3://my-bucket/instbench/g5.xlarge.json"),
    ("s3://BUCKET/PREFIX/", "s3://my-bucket/instbench/"),
    ("--columns ...", ""),             # "the columns of the line above"
    ("KEY,...", "instance_type"),
    ("RESULT...", "instbench-results/"),
    ("...", ""),                       # "any other flags"
    ("<command>", "rank"), ("CMD", "rank"), ("SUBCOMMAND", "plan"),
    ("<ID>", SID), ("ID", SID), ("TYPE", "p5.48xlarge"),
    ("USD", "20"), ("DURATION", "6h"), ("SECONDS", "60"), ("R", "us-east-1"),
    ("N", "2"), ("I", "0"), ("IP", "10.0.0.1"), ("$i", "0"), ("$HEAD", "127.0.0.1"),
    ('"$@"', ""), ("${SLURM_JOB_NUM_NODES}", "1"), ("${SLURM_JOB_ID}", "1"),
]
# A synopsis' parts that stand for "more flags here": left out.
REST = re.compile(r"\s*\[(options|model flags|-- MEASURE[- ]FLAGS)\]")
# Lines the docs give as usage errors -> what the docs quote of the message.
ERRORS = {
    "instbench mesure": "did you mean measure?",
    "instbench models vit_tiny_patch16_224": "did you mean --model vit_tiny_patch16_224?",
}
# Lines that name a command without being a command line, and why.
SKIP = {
    "instbench sweep plan|run|status|cleanup": "names the four subcommands; each one's synopsis is run",
    "instbench sweep plan|run|status|cleanup [options]": "names the four subcommands; each one's synopsis is run",
    "instbench sweep cleanup --force": "the state file's note quoted (\"stopped by ...\"), not a command line",
    "instbench sweep cleanup": "names the process that holds a state file, not a command line",
    "instbench presign": "names the command (the presigned URL's form), not a command line",
    "instbench rank --source": "names the flag that reads this JSON, in a flag's description",
}
# What a presign line runs with: AWS's documented example key, and a region.
AWS_USER = {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            "AWS_REGION": "us-east-1"}


def code_spans(paragraph):
    """(offset, text) of each inline code span in PARAGRAPH (CommonMark: a run of N backticks up to
    the next run of exactly N; inside a table row `\\|` is a literal |)."""
    for m in re.finditer(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", paragraph, re.S):
        text = " ".join(m.group(2).split())
        yield m.start(), text.replace("\\|", "|")


COMMAND = re.compile(r"^((\S*/)?instbench|[A-Z_][A-Z0-9_]*=\S*|torchrun|srun)\s")   # instbench, maybe launched


def chunks(path):
    """(code, [(line number, line)]) of the markdown file PATH: its fenced blocks, indented blocks
    (code True) and paragraphs or tables (code False)."""
    fenced, chunk = False, []
    for n, ln in enumerate(open(os.path.join(REPO, path), encoding="utf-8").read().splitlines(), 1):
        if ln.lstrip().startswith("```") or (not fenced and not ln.strip()):
            if chunk:   # an indented block: every line indented 4, the first a command
                indented = all(x.startswith("    ") for _, x in chunk) and COMMAND.match(chunk[0][1].strip())
                yield bool(fenced or indented), chunk
            fenced, chunk = fenced != ln.lstrip().startswith("```"), []
        else:
            chunk.append((n, ln))
    if chunk:
        yield fenced, chunk


def doc_lines(path):
    """(where, line) of every instbench line in the markdown file PATH: a code block's command lines
    (a `$ ` prompt dropped, backslash continuations joined), and the code spans that start with
    instbench, which may wrap across a paragraph's lines."""
    for code, chunk in chunks(path):
        if not code:
            text = "\n".join(ln for _, ln in chunk)
            for off, span in code_spans(text):
                if re.match(r"^(\S*/)?instbench \S", span):
                    yield f"{path}:{chunk[0][0] + text.count(chr(10), 0, off)}", span
            continue
        k = 0
        while k < len(chunk):
            n, ln = chunk[k]
            while ln.endswith("\\") and k + 1 < len(chunk):
                k += 1
                ln = ln[:-1] + " " + chunk[k][1].strip()
            k += 1
            ln = ln.strip()
            ln = ln[2:] if ln.startswith("$ ") else ln
            if COMMAND.match(ln) and re.search(r"(^|[\s/])instbench\s", ln):
                yield f"{path}:{n}", ln


def help_lines():
    """(where, line) of the examples of instbench --help and of every command's --help (the
    commands as `help --markdown` heads them)."""
    markdown = subprocess.run([BIN, "help", "--markdown"], capture_output=True, text=True).stdout
    commands = ["", "help"] + re.findall(r"^## instbench (.+)$", markdown, re.M)
    check(len(commands) >= 8, f"`instbench help --markdown` heads only {commands[1:]}")
    for cmd in commands:
        help_text = subprocess.run([BIN, *cmd.split(), "--help"], capture_output=True, text=True).stdout
        m = re.search(r"\nexamples:\n((?:  .*\n)+)", help_text)
        check(m, f"`instbench {cmd} --help` has no examples")
        line = None
        for ln in (m.group(1).splitlines() if m else []):
            if line is not None:   # a wrapped command line goes on after ' \'
                line = line[:-1] + " " + ln.strip()
            elif ln.startswith("  $ "):
                line = ln[4:]
            if line is not None and not line.endswith("\\"):
                yield f"instbench {cmd} --help".replace("  ", " "), line
                line = None


def variants(line):
    """A synopsis' command lines: every optional part given, one line per alternative of `a|b`
    (the k-th line takes each choice's k-th alternative, or its last); a plain line: itself."""
    line = REST.sub("", line)
    line = re.sub(r"\[([^\[\]]*)\]", r"\1", line)
    words = line.split(" ")
    alts = [w.split("|") if re.match(r"^[^|]+(\|[^|]+)+$", w) else [w] for w in words]
    return [" ".join(a[min(k, len(a) - 1)] for a in alts) for k in range(max(len(a) for a in alts))]


def substitute(line):
    """LINE with its comment dropped and each placeholder replaced where it stands as a whole word."""
    line = re.sub(r"(^|\s)#.*", "", line)
    for name, value in PLACEHOLDERS:
        before = r"(?<![\w$<])" if re.match(r"\w", name) else ""
        after = r"(?![\w>])" if re.match(r".*\w$", name) else ""
        line = re.sub(before + re.escape(name) + after, lambda _: value, line)
    return " ".join(line.split())


def argv_env(line):
    """(argv, environment additions) of LINE; None when instbench is not its command."""
    words = shlex.split(line, comments=True)
    for stop in ("|", ">"):   # what a pipe or a redirection does with the output is not instbench's
        if stop in words:
            words = words[:words.index(stop)]
    parsed = instbench_words(words)
    if parsed is None:
        return None
    env, args = parsed
    argv = [BIN] + args
    if args[:1] == ["measure"]:
        argv.append("--dry-run")
        env["INSTBENCH_PROBE_SECONDS"] = "off"
    elif args[:1] == ["presign"]:
        env.update(AWS_USER)
    elif args[:1] == ["sweep"]:
        env["AWS_REGION"] = AWS_USER["AWS_REGION"]
    return argv, env


def sweep_state():
    """One finished sweep of one candidate, as docs/formats.md ("Sweep state") describes it."""
    return {
        "schema": "instbench.sweep-state/v1", "id": SID, "region": "us-east-1", "s3_bucket": "my-bucket",
        "s3_prefix": "instbench/", "max_minutes": 30, "max_cost_usd": 20, "created": "2026-11-25T21:30:05Z",
        "finished": "2026-11-25T21:50:05Z", "phase": "done", "note": "",
        "candidates": [{
            "spec": "g5.xlarge:spot", "instance_type": "g5.xlarge", "nodes": 1, "market": "spot",
            "ami": "ami-0abc1234", "usd_per_hour_per_node": 0.5, "price_source": "snapshot", "outcome": "result",
            "reason": "", "placement_group": "", "placement_group_deleted": False,
            "launched": "2026-11-25T21:31:00Z", "ended": "2026-11-25T21:45:00Z",
            "result_path": f"instbench-results/sweep-{SID}/g5.xlarge.json"}],
        "instances": [{
            "id": "i-0123456789abcdef0", "candidate": 0, "launch_index": 0, "state": "terminated",
            "az": "us-east-1a", "private_ip": "10.0.0.1", "state_reason": "Client.UserInitiatedShutdown",
            "launched": "2026-11-25T21:31:00Z", "ended": "2026-11-25T21:46:00Z"}],
    }


def scratch():
    d = scratch_dir("doc-commands-")
    for folder in ("instbench-results", "results", "seed", f"instbench-results/sweep-{SID}"):
        fx.write_seed_results(os.path.join(d, folder))
        fx.write_json(os.path.join(d, folder, "workstation.json"),   # own hardware: priced by --price
                      fx.result(None, None, 1, 1, "NVIDIA GeForce RTX 4090", 300.0, host="workstation"))
    fx.write_json(os.path.join(d, "state", "instbench", "sweeps", f"{SID}.json"),
                  valid_state(sweep_state(), "the sweep state written here"))
    os.symlink(TESTS, os.path.join(d, "tests"))
    return d


def run(where, doc_line, line, d, ran):
    parsed = argv_env(line)
    if parsed is None:
        print(f"not a command   {where}: {doc_line}  (instbench is not what it runs)")
        return
    argv, env = parsed
    key = (tuple(argv), tuple(sorted(env.items())))
    if key not in ran:
        p = subprocess.run(argv, cwd=d, env=offline_env(d, env), capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
        ran[key] = (p.returncode, (p.stderr.strip().splitlines() or [""])[-1])
    rc, said = ran[key]
    shown = " ".join(shlex.quote(a) for a in ["instbench"] + argv[1:])
    if doc_line in ERRORS:
        check(rc == 2 and ERRORS[doc_line] in said,
              f"{where}: `{doc_line}` is a usage error in the docs, saying \"{ERRORS[doc_line]}\"; "
              f"it exits {rc}: {said}")
        print(f"usage error     {where}: {shown}")
    elif rc == 2 and NEEDS_GPU.search(said):   # its flags were read; this build or machine lacks the GPU
        print(f"needs a GPU     {where}: {shown}")
    else:
        check(rc in (0, 1), f"{where}: `{doc_line}` is refused (exit {rc}), run here as `{shown}`: {said}")
        print(f"exit {rc}          {where}: {shown}" + (f"\n                    {said}" if rc == 1 else ""))


d = scratch()
ran, seen = {}, 0
for where, doc_line in [*(x for path in DOCS for x in doc_lines(path)), *help_lines()]:
    seen += 1
    if doc_line in SKIP:
        print(f"skipped         {where}: {doc_line}  ({SKIP[doc_line]})")
        continue
    if re.match(r"^(\S*/)?instbench( [a-z]+)*:", doc_line):
        print(f"a message       {where}: {doc_line}  (what instbench prints, quoted)")
        continue
    for line in variants(substitute(doc_line)):
        run(where, doc_line, line, d, ran)
check(seen >= 100, f"only {seen} instbench lines found in {', '.join(DOCS)} and --help")
# a line the docs no longer show (or a message they no longer quote) goes from these tables too
docs = " ".join(open(os.path.join(REPO, p), encoding="utf-8").read().replace("\\|", "|") for p in DOCS)
docs = " ".join(docs.split())   # a quote may wrap across lines
for text in [*ERRORS, *ERRORS.values(), *SKIP]:
    check(text in docs, f"`{text}` (ERRORS or SKIP) is in none of {', '.join(DOCS)}")
print(f"cli_doc_commands: {seen} lines, {len(ran)} commands run, {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
