#!/usr/bin/env python3
"""Medians of dual.sh's expaa runs, from its aa.log, and each shape's ratio.

    python3 dev/gpucall/aamed.py aa.log [DOCS]

DOCS, a folder with the runs' result documents (aa_*.json from the call's
results.tar.gz): where a run's document says status ok (a run that ended on
its own, e.g. capped by AA_SAMPLES), its variant role's median over all its
samples replaces the log's last running median, and the line says "doc".

expaa alternates bin/web ("plain") and an experiment build (TAG) on one shape
per run; each run prints `bench`'s JSON progress lines. A run that finished
has a last "timing" line per role; a run cut by --max-time (the group shapes
need ~55 s for both roles' 2,000 samples against expaa's 25 s) has only the
variant role's, over the samples it took. Either way the variant role's last
running median is the run's figure, printed with its sample count so a cut
run reads as one. The ratio is plain's median of medians over TAG's: above 1
means the experiment is faster.
"""
import json
import os
import re
import statistics
import sys
from collections import defaultdict


def runs(path):
    """Yields (name, samples, median_us) per run: the variant role's last timing line."""
    name, last = None, None
    for line in open(path):
        m = re.match(r"=== (\S+)", line)
        if m:
            if name and last:
                yield name, *last
            name, last = m.group(1), None
            continue
        if not line.startswith("{"):
            continue
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if d.get("phase") == "timing" and d.get("role") == "variant" and "median_us" in d:
            last = (d["samples"], d["median_us"])
    if name and last:
        yield name, *last


def from_doc(docs, name):
    """(samples, median_us) of the run's variant role from its document, or None."""
    if not docs:
        return None
    path = os.path.join(docs, name + ".json")
    if not os.path.exists(path):
        return None
    d = json.load(open(path))
    if d.get("status") != "ok" or len(d.get("shapes") or []) != 1:
        return None
    ns = (d["shapes"][0].get("variant_timing") or {}).get("samples_ns") or []
    return (len(ns), statistics.median(ns) / 1000) if ns else None


def main():
    docs = sys.argv[2] if len(sys.argv) > 2 else None
    by = defaultdict(lambda: defaultdict(list))
    for name, n, med in runs(sys.argv[1]):
        src = "log"
        doc = from_doc(docs, name)
        if doc:
            (n, med), src = doc, "doc"
        # aa_SHAPE_BUILDROUND, e.g. aa_g2_plain1, aa_g2_skmg13: the round is
        # the last digit (expaa's rounds are 1-9), so a build's tag may end in
        # digits of its own (l2w3 and l2w4 in one log).
        m = re.match(r"aa_([^_]+)_(.+)(\d)$", name)
        if not m:
            continue
        print(f"{name}: {med:.2f} us over {n} samples ({src})")
        by[m.group(1)][m.group(2)].append(med)
    for shape, builds in by.items():
        plain = builds.pop("plain", [])
        for tag, meds in builds.items():
            if plain and meds:
                r = statistics.median(plain) / statistics.median(meds)
                print(f"{shape}: plain {statistics.median(plain):.2f} us, {tag} {statistics.median(meds):.2f} us: {r:.4f}x")


if __name__ == "__main__":
    main()
