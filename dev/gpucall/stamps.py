#!/usr/bin/env python3
"""Summarizes WG_STAMP output (kernel-notes step 23): for each file, block 0's
token chunks j past the first STAGES (steady state), in SM clock cycles:
  slack   = consumer 0 starts waiting - the chunk's copy is issued
  latency = consumer 0's wait ends - the copy is issued (issue to data in shared memory, at most)
  wait    = consumer 0's wait ends - it starts (time lost to the ring)
  period  = consumer 0 starts waiting for chunk j+1 - for chunk j
  c1 wait = the same wait, consumer 1
Then, where the build marks consumer 0's chunk (kinds 5-11), the median of
each segment of it.
Usage: stamps.py [--launch N] FILE... (lines "WGSTAMP launch j issue c0in c0out c1in c1out
[marks 5-11]")."""
import statistics
import sys


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def main():
    args = sys.argv[1:]
    only = None  # --launch N: only the launches printed as number N
    if len(args) >= 2 and args[0] == "--launch":
        only = int(args[1])
        args = args[2:]
    print("| file | launch | chunks | slack p50 | latency p50 / p90 | wait p50 / p90 / sum | c1 wait p50 / sum | period p50 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for path in args:
        # One printed launch per run of lines from j = 0 (the bench loads the
        # module more than once, so launch numbers repeat).
        runs = []
        with open(path, errors="replace") as f:
            lines = [line.split() for line in f]
        for f in lines:
            if len(f) >= 8 and f[0] == "WGSTAMP":
                n, j, *t = (int(x) for x in f[1:])
                if only is not None and n != only:
                    continue
                if j == 0 or not runs:
                    runs.append((n, {}))
                runs[-1][1][j] = t
        for n, rows in runs:
            js = sorted(rows)
            stages = 3  # skip the ring's first fill (2 or 3 stages): its copies go out before any wait
            steady = [j for j in js if j >= stages and j + 1 in rows]
            if not steady:
                continue
            slack = [rows[j][1] - rows[j][0] for j in steady]
            lat = [rows[j][2] - rows[j][0] for j in steady]
            wait = [rows[j][2] - rows[j][1] for j in steady]
            c1 = [rows[j][4] - rows[j][3] for j in steady]
            per = [rows[j + 1][1] - rows[j][1] for j in steady]
            print("| %s | %d | %d | %d | %d / %d | %d / %d / %d | %d / %d | %d |" % (
                path.split("/")[-1], n, len(steady), statistics.median(slack), statistics.median(lat),
                pct(lat, 0.9), statistics.median(wait), pct(wait, 0.9), sum(wait), statistics.median(c1), sum(c1),
                statistics.median(per)))
        timeline(path, runs)
        clocks, cycles = [], []
        for f in lines:
            if len(f) == 4 and f[0] == "WGCLOCK" and int(f[3]) > 0 and (only is None or int(f[1]) == only):
                clocks.append(1e3 * int(f[2]) / int(f[3]))
                cycles.append(int(f[2]))
        spans = []
        for f in lines:
            if len(f) == 10 and f[0] == "WGSPAN" and (only is None or int(f[1]) == only):
                spans.append([int(x) for x in f[3:]])
        if spans:
            med = [statistics.median(col) / 1e3 for col in zip(*spans)]
            print("  blocks (WGSPAN, us, medians of %d launches): first start to last end %.1f; block durations "
                  "min / mean / max %.1f / %.1f / %.1f; block 0 %.1f, started %.1f after the first, ended %.1f "
                  "before the last" % (len(spans), *med))
        if clocks:
            print("  block 0's SM clock over the block (WGCLOCK): median %.0f MHz (%.0f-%.0f, %d launches), "
                  "%.0f cycles" % (statistics.median(clocks), min(clocks), max(clocks), len(clocks),
                                   statistics.median(cycles)))


# Consumer 0's chunk, kinds 5-11 (wg_consume's marks), as segments from its
# wait for the chunk's tokens ending (kind 2) to the next chunk's ending.
SEGMENTS = [
    ("X issue", 2, 5),
    ("wait Y(j-1)", 5, 6),
    ("decode Y", 6, 7),
    ("Y issue", 7, 8),
    ("wait X(j)", 8, 9),
    ("weights landed", 9, 10),
    ("decode X(j+1)", 10, 11),
    ("tokens(j+1)", 11, None),
]


# The same under WG_ILV, which marks kinds 5-8 only.
SEGMENTS_ILV = [
    ("X issue + decode Y", 5, 6),
    ("release, weights landed", 6, 7),
    ("Y issue + decode X(j+1)", 7, 8),
    ("tokens(j+1)", 8, None),
]


def timeline(path, runs):
    """Medians over every printed launch's steady chunks of each segment."""
    segments, segs = None, None
    for _, rows in runs:
        for j in sorted(rows):
            t = rows[j]
            if j < 3 or j + 1 not in rows or len(t) < 12:
                continue
            if segments is None:
                segments = SEGMENTS if min(t[5:12]) > 0 else SEGMENTS_ILV if min(t[5:9]) > 0 else []
                segs = {name: [] for name, _, _ in segments}
            if any(t[k] == 0 for _, a, b in segments for k in (a, b) if k is not None):
                continue
            for name, a, b in segments:
                end = rows[j + 1][2] if b is None else t[b]
                segs[name].append(end - t[a])
    if not segs or not next(iter(segs.values())):
        return
    total = sum(statistics.median(v) for v in segs.values())
    print()
    print("%s, consumer 0 per chunk (median cycles, share of their sum %d):" % (path.split("/")[-1], total))
    for name, v in segs.items():
        m = statistics.median(v)
        print("  %-16s %6d  %4.1f%%  (p90 %d)" % (name, m, 100.0 * m / total, pct(v, 0.9)))



if __name__ == "__main__":
    main()
