#!/usr/bin/env python3
"""Summarizes WG_STAMP output (kernel-notes step 23): for each file, block 0's
token chunks j past the first STAGES (steady state), in SM clock cycles:
  slack   = consumer 0 starts waiting - the chunk's copy is issued
  latency = consumer 0's wait ends - the copy is issued (issue to data in shared memory, at most)
  wait    = consumer 0's wait ends - it starts (time lost to the ring)
  period  = consumer 0 starts waiting for chunk j+1 - for chunk j
  c1 wait = the same wait, consumer 1
Usage: stamps.py FILE... (lines "WGSTAMP launch j issue c0in c0out c1in c1out")."""
import statistics
import sys


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def main():
    print("| file | launch | chunks | slack p50 | latency p50 / p90 | wait p50 / p90 / sum | c1 wait p50 / sum | period p50 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for path in sys.argv[1:]:
        # One printed launch per run of lines from j = 0 (the bench loads the
        # module more than once, so launch numbers repeat).
        runs = []
        for line in open(path, errors="replace"):
            f = line.split()
            if len(f) == 8 and f[0] == "WGSTAMP":
                n, j, *t = (int(x) for x in f[1:])
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


if __name__ == "__main__":
    main()
