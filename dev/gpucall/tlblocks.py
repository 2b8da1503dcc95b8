#!/usr/bin/env python3
"""Per-block WG_TL=2 marks of one stream-K run, grouped by each block's pieces.

Reads the WGTLB lines (launch 30, every block: start, tokens, first, mainloop,
stored, end, piece1, lastin, lastfirst, in ns from the token pass's first
block) that dual.sh's tlruns leaves in $OUT/tl.txt, rebuilds each block's
stream-K pieces from the equal ranges (blocks x kch chunks over tiles,
wg_pieces' rule), and prints, in us, medians over the run's prints:
  - per class of block (its piece count, and what its last piece is: an owner
    with how many partners, a middle piece inside one tile, the tile's tail,
    a whole tile): median and maximum
    of every mark, and of the block's end;
  - the two-piece blocks' per-piece costs (least squares: first piece
    time = a * chunks + b, the same for the second), the restart (first
    piece's end to the next one's first tokens) and the owners' hand-over
    (mainloop end to stores);
  - the latest blocks.
Usage: python3 dev/gpucall/tlblocks.py tl.txt RUN TILES KCH [GRID]
  e.g. tlblocks.py tl.txt tl2_d4 96 56 (dual bench4 under DT: 96 tiles of
  56 chunks on 132 blocks); kernel-notes session 30, call 1.
"""
import statistics as st
import sys


def pieces_of(cuts, b, kch):
    """Block b's stream-K pieces (tile, k0, k1) for the chunk cuts of every
    block (block b runs chunks cuts[b] .. cuts[b + 1] - 1), as wg_pieces
    walks them; skmodel.py shares it."""
    cur, end, out = cuts[b], cuts[b + 1], []
    while cur < end:
        t, k0 = cur // kch, cur % kch
        k1 = min(kch, k0 + end - cur)
        out.append((t, k0, k1))
        cur += k1 - k0
    return out


def main():
    path, run, tiles, kch = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    grid = int(sys.argv[5]) if len(sys.argv) > 5 else 132
    total = tiles * kch

    def begin(x):
        return x * total // grid

    cuts = [begin(x) for x in range(grid + 1)]

    def pieces(b):
        return pieces_of(cuts, b, kch)

    def partners(b, t):
        last, i = b, (t + 1) * kch - 1
        while begin(last + 1) <= i:
            last += 1
        return last - b

    prints, cur = [], None
    for line in open(path):
        if line.startswith("=== "):
            cur = line.split()[1]
        elif line.startswith("WGTLB") and cur == run:
            f = [int(v) for v in line.split()[1:]]
            if f[1] == 0:
                prints.append({})
            prints[-1][f[1]] = [v / 1000 for v in f[3:]]
    if not prints:
        sys.exit("tlblocks: no WGTLB lines for run %s in %s" % (run, path))
    names = "start tokens first mainloop stored end piece1 lastin lastfirst".split()
    med = {b: [st.median(p[b][i] for p in prints if b in p) for i in range(9)] for b in range(grid)}
    print("%s: %d prints, %d blocks, %d tiles of %d chunks" % (run, len(prints), grid, tiles, kch))

    classes = {}
    for b in range(grid):
        ps = pieces(b)
        t, k0, k1 = ps[-1]
        if k0 == 0 and k1 < kch:
            key = (len(ps), "owner", partners(b, t))
        elif k0 > 0 and k1 < kch:
            # Inside one tile: under kernel-notes step 84 it takes the tail.
            key = (len(ps), "middle", partners(b, t))
        else:
            key = (len(ps), "whole" if k0 == 0 else "non-owner", 0)
        classes.setdefault(key, []).append(b)
    for key, bs in sorted(classes.items()):
        cols = " ".join("%s %.2f/%.2f" % (n, st.median(med[b][i] for b in bs), max(med[b][i] for b in bs))
                        for i, n in enumerate(names))
        print("%d piece(s), last %s, %d partner(s): %d blocks; median/max: %s" % (key + (len(bs), cols)))

    two = [b for b in range(grid) if len(pieces(b)) == 2]
    if len(two) > 2:
        def fit(xs, ys):
            mx, my = st.mean(xs), st.mean(ys)
            a = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
            return a, my - a * mx
        n1 = [pieces(b)[0][2] - pieces(b)[0][1] for b in two]
        n2 = [pieces(b)[1][2] - pieces(b)[1][1] for b in two]
        a1, c1 = fit(n1, [med[b][6] - med[b][2] for b in two])
        a2, c2 = fit(n2, [med[b][3] - med[b][8] for b in two])
        print("two-piece blocks: first piece %.3f us/chunk + %.2f; second %.3f us/chunk + %.2f" % (a1, c1, a2, c2))
        print("  restart (piece1 to the next piece's first tokens) median %.2f; entry %.2f"
              % (st.median(med[b][8] - med[b][6] for b in two), st.median(med[b][7] - med[b][6] for b in two)))
        for np in sorted({partners(b, pieces(b)[1][0]) for b in two}):
            hs = [med[b][4] - med[b][3] for b in two if partners(b, pieces(b)[1][0]) == np]
            print("  owners with %d partner(s): mainloop end to stores median %.2f (%d blocks)" % (np, st.median(hs), len(hs)))
    one = [b for b in range(grid) if len(pieces(b)) == 1]
    if one:
        print("one-piece blocks: %.3f us/chunk (median, first tokens to mainloop end)"
              % st.median((med[b][3] - med[b][2]) / (pieces(b)[0][2] - pieces(b)[0][1]) for b in one))
    for b in sorted(range(grid), key=lambda b: -med[b][5])[:8]:
        print("latest: block %d ends %.2f, pieces %s" % (b, med[b][5], pieces(b)))


if __name__ == "__main__":
    main()
