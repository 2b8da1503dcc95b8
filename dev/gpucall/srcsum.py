#!/usr/bin/env python3
"""Summarizes an ncu source page in CSV (`ncu -i REP --page source --csv
--print-source sass`): the warp stall samples and executed instructions of
each SASS opcode, and the lines with the most samples, so that a profile of
the main loop says which instructions its warps wait at (kernel-notes step
22 read foldsrc's by hand).

Columns are found by name, as ncu versions order them differently: the SASS
text ("Source"), the samples ("Warp Stall Sampling (All Samples)" or the
first column with "Stall Sampling"), the executed instructions (a column
with "Instructions Executed"), and the stall reasons where the page has them
(columns whose name holds "stall", largest three per opcode).
Usage: srcsum.py [--top N] FILE.csv..."""
import csv
import sys


def number(s):
    try:
        return float(s.replace(",", ""))
    except (AttributeError, ValueError):
        return 0.0


def column(header, *needles):
    for needle in needles:
        for i, h in enumerate(header):
            if needle.lower() in h.lower():
                return i
    return None


def opcode(sass):
    # "@!P0 HMUL2 R4, R4, R9 ;" -> HMUL2; "HGMMA.64x128x16.F32 ..." -> HGMMA
    words = sass.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].split(".")[0] if words else "?"


def summarize(path, top):
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if r]
    # ncu prints a title line or two before the header on some versions.
    start = next((i for i, r in enumerate(rows) if column(r, "Source") is not None and column(r, "Stall Sampling", "Samples") is not None), None)
    if start is None:
        print("%s: no header with Source and stall samples" % path)
        return
    header, body = rows[start], rows[start + 1:]
    src = column(header, "Source")
    samples = column(header, "Warp Stall Sampling (All", "Stall Sampling", "Samples")
    inst = column(header, "Instructions Executed")
    reasons = [i for i, h in enumerate(header) if "stall" in h.lower() and i != samples and "sampling" not in h.lower()]
    by_op, lines, total = {}, [], 0.0
    for r in body:
        if len(r) <= max(src, samples):
            continue
        op, n = opcode(r[src]), number(r[samples])
        e = by_op.setdefault(op, {"samples": 0.0, "inst": 0.0, "lines": 0, "reasons": {}})
        e["samples"] += n
        e["lines"] += 1
        if inst is not None and inst < len(r):
            e["inst"] += number(r[inst])
        for i in reasons:
            if i < len(r):
                e["reasons"][header[i]] = e["reasons"].get(header[i], 0.0) + number(r[i])
        lines.append((n, r[src].strip()))
        total += n
    print("=== %s: %d SASS lines, %.0f stall samples" % (path, len(lines), total))
    print("%-12s %9s %6s %12s %6s  %s" % ("opcode", "samples", "share", "executed", "lines", "top stall reasons"))
    for op, e in sorted(by_op.items(), key=lambda kv: -kv[1]["samples"])[:top]:
        rs = sorted(e["reasons"].items(), key=lambda kv: -kv[1])[:3]
        why = ", ".join("%s %.0f" % (k, v) for k, v in rs if v > 0)
        share = e["samples"] / total if total else 0.0
        print("%-12s %9.0f %5.1f%% %12.0f %6d  %s" % (op, e["samples"], 100 * share, e["inst"], e["lines"], why))
    print("lines with the most samples:")
    for n, s in sorted(lines, key=lambda x: -x[0])[:top]:
        print("%9.0f  %s" % (n, s[:110]))


def main():
    args, top = sys.argv[1:], 15
    if len(args) >= 2 and args[0] == "--top":
        top, args = int(args[1]), args[2:]
    if not args:
        print(__doc__)
        return 2
    for path in args:
        summarize(path, top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
