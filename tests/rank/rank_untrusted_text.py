"""`instbench rank` shows text it did not write (price file notes, the price file's own name, device
names) without letting it drive the terminal: the table on stdout and every warning and info line
on stderr carry no control character but newlines (ESC and BEL appear as the text "\\x1b", "\\x07"),
the JSON stays JSON (the same text round-trips, escaped by the encoder), and the SVG chart is XML
with the control characters dropped.  A price file whose zone or region is not shaped like AWS's
is refused, naming the field.  Usage: rank_untrusted_text.py INSTBENCH"""
import json
import os
import re
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
# this area's helpers, then tests/lib (testlib) and tests/fakes
sys.path[:0] = [HERE] + [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import rank_fixtures as fx  # noqa: E402

BIN = sys.argv[1]
OSC52 = "\x1b]52;c;aGVsbG8=\x07"      # writes the user's clipboard
CLEAR = "\x1b[2J"                     # clears the screen
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")
from testlib import check, failures


def safe(text, what):
    bad = CONTROL.findall(text)
    check(not bad, f"{what}: raw control characters {sorted(set(bad))!r} reach the terminal:\n{text[-1500:]}")


with tempfile.TemporaryDirectory() as d:
    res = fx.result("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G" + CLEAR, 330.0)
    fx.write_json(os.path.join(d, "res", "r.json"), res)
    doc = fx.prices_doc([fx.price_record("g5.xlarge", "us-east-1", 1.006, {"us-east-1a": 0.45}, bucket=1)])
    doc["placement_note"] = "scores unavailable " + OSC52
    doc["snapshot"] = {"date": "2026-11-21", "source": "catalog " + CLEAR}
    # File names are untrusted too: this one reaches the table's "prices:" line and the chart.
    pfile = os.path.join(d, "prices" + CLEAR + ".json")
    fx.write_json(pfile, doc)
    svg = os.path.join(d, "chart.svg")

    rc, out, err = fx.run(BIN, [os.path.join(d, "res"), "--source", pfile, "--format", "table", "--plot", svg])
    check(rc == 0, f"table: exit {rc}: {err}")
    safe(out, "table (stdout)")
    safe(err, "stderr")
    check("placement scores: scores unavailable \\x1b]52;c;aGVsbG8=\\x07" in err,
          f"the placement note is not shown escaped on stderr:\n{err}")
    check("prices\\x1b[2J.json" in out, f"the price file's name is not shown escaped:\n{out}")

    # JSON: the encoder escapes; the text itself round-trips.
    rc, out, err = fx.run(BIN, [os.path.join(d, "res"), "--source", pfile, "--format", "json"])
    check(rc == 0, f"json: exit {rc}: {err}")
    check("\x1b" not in out and "\x07" not in out, "raw ESC or BEL in the JSON")
    if rc == 0:
        check(CLEAR in json.loads(out)["prices"]["origin"], "JSON does not carry the file name as it is")

    # SVG: well-formed XML, control characters dropped.
    if os.path.exists(svg):
        raw = open(svg, "rb").read().decode("utf-8", "replace")
        check(not re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", raw), "control characters in the SVG")
        try:
            ET.parse(svg)
        except ET.ParseError as e:
            check(False, f"SVG is not well-formed: {e}")
    else:
        check(False, "no SVG written")

    # Skipped inputs: the reason names the file; its name is escaped too.
    bad = os.path.join(d, "bad" + OSC52 + ".json")
    with open(bad, "w") as f:
        f.write("{")
    rc, out, err = fx.run(BIN, [bad, os.path.join(d, "res"), "--source", pfile, "--format", "json"])
    safe(err, "skip warning")
    check("bad\\x1b]52;c;aGVsbG8=\\x07.json" in err, f"skipped file not named (escaped):\n{err}")

    # A price file that cannot be used: the error names it, escaped.
    broken = os.path.join(d, "broken" + CLEAR + ".json")
    with open(broken, "w") as f:
        f.write('{"schema": "' + OSC52 + '"}')
    rc, out, err = fx.run(BIN, [os.path.join(d, "res"), "--source", broken])
    check(rc == 1, f"broken prices: exit {rc}")
    safe(err, "price file error")

    # Names in a price file must look like AWS's: a zone that is an escape sequence or a formula,
    # or an odd region, refuses the file with a message naming the field.
    for name, rec in {"zone": fx.price_record("g5.xlarge", "us-east-1", 1.0, {OSC52: 0.4}),
                      "formula zone": fx.price_record("g5.xlarge", "us-east-1", 1.0, {"=cmd|' /C calc'!A0": 0.4}),
                      "region": fx.price_record("g5.xlarge", "us-east-1" + CLEAR, 1.0, None)}.items():
        p = os.path.join(d, "hostile-prices.json")
        fx.write_json(p, fx.prices_doc([rec]))
        rc, out, err = fx.run(BIN, [os.path.join(d, "res"), "--source", p, "--format", "table"])
        field = "region" if name == "region" else "availability_zone"
        check(rc == 1 and field in err and "hostile-prices.json" in err, f"price file with a bad {name}: {rc} {err}")
        safe(out + err, f"price file with a bad {name}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("rank untrusted text: all checks passed")
