#!/usr/bin/env python3
"""Summarizes WG_STAMP output (kernel-notes step 23): for each file, block 0's
token chunks j past the first STAGES (steady state), in SM clock cycles:
  slack   = consumer 0 starts waiting - the chunk's copy is issued
  latency = consumer 0's wait ends - the copy is issued (issue to data in shared memory, at most)
  wait    = consumer 0's wait ends - it starts (time lost to the ring)
  period  = consumer 0 starts waiting for chunk j+1 - for chunk j
  c1 wait = the same wait, consumer 1
Then, where the build marks the consumers' chunks (kinds 5-11 consumer 0,
12-18 consumer 1), the median of each segment of each, and per chunk the
cycles in which both consumers, one or neither is issuing wgmmas (with the
group's third consumer marked too, "WGSTAMP2" lines: kinds 24-25 its
tokens' wait, 26-32 its chunk marks, how many of the three). Where it
marks piece boundaries too (kinds 19-23, consumer 0), the median of each
segment from a piece's last wgmmas to the next piece's first.
--staged: the marks of weights=staged (WG_CSA), kinds 5-8 (STAGED).
Usage: stamps.py [--launch N] [--staged] FILE... (lines "WGSTAMP launch j issue c0in c0out c1in
c1out [marks 5-11 [marks 12-18 [boundary marks 19-23]]]")."""
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
    segments, issues = SEGMENTS, ISSUES
    if args and args[0] == "--staged":
        segments, issues = STAGED, STAGED_ISSUES
        args = args[1:]
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
            elif len(f) == 12 and f[0] == "WGSTAMP2" and runs:
                # Consumer 2's kinds 24-32, printed after the launch's
                # WGSTAMP lines.
                n, j, *t = (int(x) for x in f[1:])
                row = runs[-1][1].get(j)
                if row is not None and len(row) == 24 and (only is None or n == only):
                    row.extend(t)
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
        timeline(path, runs, segments, issues)
        boundaries(path, runs)
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
# Consumer 0's issue segments (start kind, end kind): X and Y.
ISSUES = [(2, 5), (7, 8)]

# weights=staged (WG_CSA): one issue of the chunk's eight SS wgmmas.
STAGED = [
    ("issue", 2, 5),
    ("wait chunk j-1", 5, 6),
    ("weights landed", 6, 7),
    ("decode j+1", 7, 8),
    ("tokens(j+1)", 8, None),
]
STAGED_ISSUES = [(2, 5)]


# Where consumer c's marks are: kind k (5-11) of consumer 0 is k + SHIFT[c],
# and its wait for the tokens ends at kind TOKENS_OUT[c].
SHIFT = (0, 7, 21)
TOKENS_OUT = (2, 4, 25)


def timeline(path, runs, segments, issues):
    """Medians over every printed launch's steady chunks of each segment of
    consumer 0's chunk, and of consumers 1 and 2's where the build marks
    them (SHIFT, TOKENS_OUT)."""
    ks = [k for _, a, b in segments for k in (a, b) if k is not None]
    for c in (0, 1, 2):
        shift = SHIFT[c]

        def at(row, k):
            return row[TOKENS_OUT[c] if k == 2 else (k + shift if k >= 5 else k)]

        segs = {name: [] for name, _, _ in segments}
        for _, rows in runs:
            for j in sorted(rows):
                t = rows[j]
                if j < 3 or j + 1 not in rows or len(t) < 12 + shift or len(rows[j + 1]) < 12 + shift:
                    continue
                if any(at(t, k) == 0 for k in ks) or at(rows[j + 1], 2) == 0:
                    continue
                for name, a, b in segments:
                    end = at(rows[j + 1], 2) if b is None else at(t, b)
                    segs[name].append(end - at(t, a))
        if not next(iter(segs.values())):
            continue
        total = sum(statistics.median(v) for v in segs.values())
        print()
        print("%s, consumer %d per chunk (median cycles, share of their sum %d):" % (path.split("/")[-1], c, total))
        for name, v in segs.items():
            m = statistics.median(v)
            print("  %-16s %6d  %4.1f%%  (p90 %d)" % (name, m, 100.0 * m / total, pct(v, 0.9)))
    overlap(path, runs, issues)


# A boundary before chunk j (the next piece's first), consumer 0: from
# chunk j-1's mark 9 (its Y wgmmas issued, its X wgmmas done) through kinds
# 19-23 to chunk j's token wait (kinds 1-2) and its first wgmmas (mark 5).
BOUNDARY = [
    ("last wgmmas drained", 9, 19, -1),
    ("tile staged", 19, 20, 0),
    ("stores issued", 20, 21, 0),
    ("next piece entered", 21, 22, 0),
    ("its first weights landed", 22, 23, 0),
    ("its first X decoded", 23, 1, 0),
    ("token wait", 1, 2, 0),
    ("to its first wgmmas", 2, 5, 0),
]


def boundaries(path, runs):
    segs = {name: [] for name, *_ in BOUNDARY}
    total, count = [], 0
    for _, rows in runs:
        for j in sorted(rows):
            t, p = rows[j], rows.get(j - 1)
            # Marked in this launch: kind 22 between the two chunks' starts
            # (the array keeps other launches' values at other indices).
            if p is None or len(t) < 24 or len(p) < 24 or not p[5] < t[22] < t[5]:
                continue
            count += 1
            for name, a, b, prev in BOUNDARY:
                segs[name].append(t[b] - (p if prev else t)[a])
            total.append(t[5] - p[9])
    if not count:
        return
    print("  piece boundaries (consumer 0, %d, cycles, medians): %s; from the last chunk's Y wgmmas to the next "
          "piece's first wgmmas %d" % (count, ", ".join("%s %d" % (n, statistics.median(v)) for n, v in segs.items()),
                                       statistics.median(total)))


def overlap(path, runs, issues):
    """Where two or three consumers mark their chunks: per steady chunk of
    consumer 0 (from its tokens' wait ending to the next), the cycles in
    which each number of them is inside an issue segment (issues: (start,
    end) kinds of consumer 0, kind 2 being the tokens' wait ending; the
    halves' X is 2 to 5 and Y 7 to 8)."""
    counts = []  # per chunk: cycles with 0, 1, 2, 3 consumers issuing
    ncons = 0
    for _, rows in runs:
        if any(len(t) < 19 for t in rows.values()):
            return
        ncons = 3 if all(len(t) >= 33 for t in rows.values()) else 2
        spans = []  # (start, end) of every issue segment, per consumer
        for c in range(ncons):
            s = []
            for j in sorted(rows):
                t = rows[j]
                for a, b in issues:
                    start = t[TOKENS_OUT[c]] if a == 2 else t[a + SHIFT[c]]
                    s.append((start, t[b + SHIFT[c]]))
            spans.append([(a, b) for a, b in s if a and b and b > a])
        for j in sorted(rows):
            if j < 3 or j + 1 not in rows:
                continue
            lo, hi = rows[j][2], rows[j + 1][2]
            if not lo or hi <= lo:
                continue
            # Cycle counts by sweeping the clipped segments' edges.
            edges = []
            for c in range(ncons):
                for a, b in spans[c]:
                    a, b = max(a, lo), min(b, hi)
                    if b > a:
                        edges += [(a, 1), (b, -1)]
            edges.sort()
            depth, last, cnt = 0, lo, [0, 0, 0, 0]
            for x, d in edges:
                cnt[min(depth, ncons)] += x - last
                depth += d
                last = x
            cnt[0] += hi - last
            counts.append(cnt)
    if not counts:
        return
    med = [statistics.median(c[i] for c in counts) for i in range(4)]
    if ncons == 3:
        print("  three consumers issuing %d, two %d, one %d, none %d cycles per chunk of consumer 0 (medians)" % (
            med[3], med[2], med[1], med[0]))
    else:
        print("  both consumers issuing %d, one %d, neither %d cycles per chunk of consumer 0 (medians)" % (
            med[2], med[1], med[0]))


if __name__ == "__main__":
    main()
