#!/usr/bin/env python3
"""Shared-memory bank conflicts of fused attention's score tiles (issue 25), from the kernel
source: the fp32 tiles sS/sdP are read by lane (r = lane / 2, half = lane % 2) at column
half * 16 + i of row r, for i in 0..15.  With FA_SLD floats a row that is a 16-way conflict
(rows of 32 floats); the padded stride must keep it at most 4-way and stay a legal wmma stride
(store_matrix_sync of floats: a multiple of 4).  The bank model (32 banks of 4 bytes; lanes
reading one word are not in conflict) is CUDA's for compute capability 5.0 and later.
Usage: bank_conflicts.py REPO_ROOT"""
import os
import re
import sys

src = open(os.path.join(sys.argv[1], "src", "cuda", "kernels", "flash_attention.cu")).read()
kt = int(re.search(r"#define FA_KT (\d+)", src).group(1))
m = re.search(r"#define FA_SLD \(FA_KT \+ (\d+)\)", src)
sld = kt + int(m.group(1)) if m else kt
uses = len(re.findall(r"float s(?:S|dP)\[NW\]\[16\]\[FA_SLD\]", src))


def ways(stride):
    worst = 1
    for i in range(16):
        banks = {}
        for lane in range(32):
            r, half = lane // 2, lane % 2
            word = r * stride + half * 16 + i
            banks.setdefault(word % 32, set()).add(word)
        worst = max(worst, max(len(w) for w in banks.values()))
    return worst


fails = []
if uses != 5:
    fails.append("%d of the 5 score/dP tiles (sS x3, sdP x2) have rows of FA_SLD floats" % uses)
if sld % 4:
    fails.append("FA_SLD %d is not a legal wmma stride for floats (a multiple of 4)" % sld)
w = ways(sld)
if w > 4:
    fails.append("rows of %d floats: %d-way bank conflicts on the score tiles (at most 4 wanted)" % (sld, w))
for f in fails:
    print("FAIL " + f)
print("bank_conflicts: rows of %d floats, %d-way (32 floats: %d-way); %d failure(s)" % (sld, w, ways(32), len(fails)))
sys.exit(1 if fails else 0)
