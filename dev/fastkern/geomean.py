#!/usr/bin/env python3
"""Geomean of cold-L2 medians per (variant, launch config) from run_*.txt."""
import glob, math, os, re, sys

d = sys.argv[1] if len(sys.argv) > 1 else "/tmp/fkout"
pat = re.compile(r"^TIME (\S+)\s+order=(\d) persistent=(\d) cold_med=\s*([\d.]+)")
rows = []
for f in sorted(glob.glob(os.path.join(d, "run_*.txt"))):
    v = os.path.basename(f)[4:-4]
    per = {}
    for line in open(f):
        m = pat.match(line)
        if m:
            per.setdefault((m.group(2), m.group(3)), {})[m.group(1)] = float(m.group(4))
    for (o, p), t in per.items():
        if len(t) == 4:
            g = math.exp(sum(math.log(x) for x in t.values()) / 4)
            rows.append((g, v, o, p, [t[k] for k in sorted(t)]))
rows.sort()
for g, v, o, p, ts in rows:
    print(f"GEOMEAN {g:8.2f} us  {v:4s} order={o} persistent={p}  " + " ".join(f"{x:8.2f}" for x in ts))
grp = [r for r in rows if not r[1].startswith("d")]
dual = [r for r in rows if r[1].startswith("d")]
if grp:
    print("BEST", grp[0][1])
if dual:
    print("BESTDUAL", dual[0][1])
