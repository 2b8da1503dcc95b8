#!/usr/bin/env python3
"""A model of the halves pipeline's chunk (kernel-notes step 25): consumers
share one FIFO tensor pipe that runs each wgmma for T cycles; issuing a wgmma
blocks its warp while Q wgmmas are queued or running; between its two halves
a consumer spends the measured segments of its chunk (WG_STAMP, stamps.py:
decode Y, the next weights, decode X, the next tokens). Prints the chunk
period it gives, to set against the stamps' measured period.
Usage: pipesim.py [DECODE_Y WEIGHTS DECODE_X TOKENS] (default: the narrow
dual tile's, bench2, BENCHMARKS section 20 call 12)."""
import sys


def period(T, Q, seg, n=4, consumers=2, offset=0, chunks=60):
    pipe_free = 0.0
    queue = []  # completion times of the wgmmas in the pipe
    t = [offset * c for c in range(consumers)]
    done_half = [dict() for _ in range(consumers)]
    starts = [[] for _ in range(consumers)]

    def issue(c, h):
        nonlocal pipe_free
        for _ in range(n):
            queue[:] = [x for x in queue if x > t[c]]
            while len(queue) >= Q:
                t[c] = max(t[c], min(queue))
                queue[:] = [x for x in queue if x > t[c]]
            pipe_free = max(t[c], pipe_free) + T
            queue.append(pipe_free)
            t[c] += 2  # the issue itself
        done_half[c][h] = pipe_free

    step = [0] * consumers
    while True:
        live = [c for c in range(consumers) if step[c] < 6 * chunks]
        if not live:
            break
        c = min(live, key=lambda i: t[i])
        j, s = divmod(step[c], 6)
        if s == 0:
            starts[c].append(t[c])
            issue(c, 2 * j)  # X(j)
        elif s == 1:
            if j:
                t[c] = max(t[c], done_half[c][2 * j - 1])  # Y(j-1) done
            t[c] += seg[0]  # decode Y
        elif s == 2:
            issue(c, 2 * j + 1)  # Y(j)
        elif s == 3:
            t[c] = max(t[c], done_half[c][2 * j]) + seg[1]  # X(j) done, the next weights
        elif s == 4:
            t[c] += seg[2]  # decode X(j+1)
        else:
            t[c] += seg[3]  # the next tokens
        step[c] += 1
    p = starts[0]
    return (p[-1] - p[10]) / (len(p) - 11)


def main():
    seg = [float(x) for x in sys.argv[1:5]] if len(sys.argv) >= 5 else [202, 221, 216, 186]
    for T in (64, 80, 100, 120):
        print("T %3d cycles per wgmma: chunk %s (Q = 1, 2, 4)" % (
            T, ", ".join("%.0f" % period(T, Q, seg) for Q in (1, 2, 4))))


if __name__ == "__main__":
    main()
