#!/usr/bin/env python3
"""PyTorch peers for pitchtank's NVFP4 GEMMs: what a user gets without us.

Runs on the GPU machine (PyTorch 2.11 there); the only Python in the project.
For each problem and shape it times three forms, with the same protocol as
`web bench` (internal/bench): cold L2 (a buffer of 2x the device's L2 zeroed
before every sample, outside the event pair), one CUDA event pair per sample
on a non-default stream, one untimed pass then a warm-up of at least
max(10 launches, 100 ms), and measurement.md's stop rule (>= 10 samples and
0.5 s of summed sample time, then rel. SEM <= 0.25%; caps 15 s wall and 2000
samples). The median is reported.

  a  per call: decode A and B with their scales to fp16, then torch.matmul
     per group (what a casual user writes). Dual: silu(A@B1^T) * (A@B2^T).
  b  B (B1, B2) decoded to fp16 once ahead of time, A decoded per call, the
     whole call captured in one CUDA graph (what a strong PyTorch user
     writes: 4x the weight memory, no launch gaps).
  c  both operands decoded ahead, only the cuBLAS matmuls (and the dual's
     silu*mul) timed, also captured in a graph: not a valid solution (A is an
     activation), but the floor of every decode-then-cuBLAS approach.

Decoding is one gather through a 256-entry byte table (byte -> two fp16
values, low nibble first) and one broadcast multiply by the e4m3 scales.

Inputs: random bytes (so all 16 FP4 codes appear) and e4m3 scales spread
over four binades with random mantissas, shifted per K so typical |C| stays
of order 10-100 (the same kind of inputs as internal/nvfp4's generator; not
the same bytes: timings do not depend on the values beyond their
distribution).

Shapes come from kernels/problems/<problem>.json (the same files `web bench`
embeds), or from a file written by `web bench --problem P --suite S
--dump-shapes` (its one JSON line) via --shapes.

Usage:
  python3 bench/peer/peer.py [--problems nvfp4_group_gemm,nvfp4_dual_gemm]
      [--suite benchmarks] [--shapes FILE] [--forms a,b,c] [--out peer.json]
"""

import argparse
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]

STOP = dict(min_samples=10, min_seconds=0.5, max_rel_sem=0.0025, max_seconds=15.0, max_samples=2000)
WARMUP_MIN_LAUNCHES = 10
WARMUP_MIN_SECONDS = 0.1


def repo_root():
    return os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def load_shapes(problem, suite, shapes_file):
    if shapes_file:
        with open(shapes_file) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                d = json.loads(line)
                if d.get("type") == "shapes" and d.get("problem") == problem:
                    return d["shapes"]
        raise SystemExit(f"peer: {shapes_file} has no shapes line for {problem}")
    path = os.path.join(repo_root(), "kernels", "problems", problem + ".json")
    with open(path) as f:
        d = json.load(f)
    return d[suite]


class Decoder:
    """Byte-table FP4 decode: table[b] = (E2M1[b & 15], E2M1[b >> 4]) in fp16."""

    def __init__(self, device):
        t = torch.tensor([[E2M1[b & 15], E2M1[b >> 4]] for b in range(256)], dtype=torch.float16)
        self.table = t.to(device)

    def __call__(self, data, scales):
        # data: uint8 [rows, K/2]; scales: uint8 e4m3 codes [rows, K/16].
        rows = data.shape[0]
        k = data.shape[1] * 2
        vals = self.table[data.long()].view(rows, k // 16, 16)  # one gather
        s = scales.view(torch.float8_e4m3fn).to(torch.float16)
        return (vals * s.unsqueeze(-1)).view(rows, k)  # one broadcast multiply (exact in fp16)


def gen_operand(gen, rows, k, exp_base, device):
    data = torch.randint(0, 256, (rows, k // 2), dtype=torch.uint8, generator=gen)
    # e4m3: 0 | eeee | mmm, value 2^(e-7) * (1 + m/8); exponent fields over four binades.
    e = torch.randint(exp_base, exp_base + 4, (rows, k // 16), dtype=torch.int32, generator=gen)
    m = torch.randint(0, 8, (rows, k // 16), dtype=torch.int32, generator=gen)
    scales = ((e << 3) | m).to(torch.uint8)
    return data.to(device), scales.to(device)


def exp_base_for(k, target):
    # rms of an e2m1 value over uniform codes, times the scale rms over four
    # binades starting at 2^(base-7): pick base so sqrt(K) * rms_a * rms_b ~ target.
    rms_code = math.sqrt(sum(v * v for v in E2M1) / 16)
    best, best_err = 7, float("inf")
    for base in range(1, 12):
        sc = [2.0 ** (base + i - 7) * (1 + j / 8) for i in range(4) for j in range(8)]
        rms_s = math.sqrt(sum(x * x for x in sc) / len(sc))
        std = math.sqrt(k) * (rms_code * rms_s) ** 2
        err = abs(math.log(std / target))
        if err < best_err:
            best, best_err = base, err
    return best


def make_inputs(kind, shape, seed, device):
    gen = torch.Generator().manual_seed(seed)
    ms, n, k = shape["m"], shape["n"], shape["k"]
    base = exp_base_for(k, 30.0 if kind == "group" else 4.0)
    if kind == "group":
        a = [gen_operand(gen, m, k, base, device) for m in ms]
        b = [gen_operand(gen, n, k, base, device) for _ in ms]
        return {"a": a, "b": b}
    a = gen_operand(gen, ms[0], k, base, device)
    b1 = gen_operand(gen, n, k, base, device)
    b2 = gen_operand(gen, n, k, base, device)
    return {"a": [a], "b1": b1, "b2": b2}


def build_forms(kind, inp, dec):
    """Returns {form: (callable, uses_graph, output getter)}."""
    forms = {}
    if kind == "group":
        def form_a():
            return [torch.matmul(dec(*a), dec(*b).t()) for a, b in zip(inp["a"], inp["b"])]
        bd = [dec(*b) for b in inp["b"]]
        def form_b():
            return [torch.matmul(dec(*a), b.t()) for a, b in zip(inp["a"], bd)]
        ad = [dec(*a) for a in inp["a"]]
        def form_c():
            return [torch.matmul(a, b.t()) for a, b in zip(ad, bd)]
    else:
        a0 = inp["a"][0]
        def form_a():
            x = dec(*a0)
            return [F.silu(torch.matmul(x, dec(*inp["b1"]).t())) * torch.matmul(x, dec(*inp["b2"]).t())]
        b1d, b2d = dec(*inp["b1"]), dec(*inp["b2"])
        def form_b():
            x = dec(*a0)
            return [F.silu(torch.matmul(x, b1d.t())) * torch.matmul(x, b2d.t())]
        ad = dec(*a0)
        def form_c():
            return [F.silu(torch.matmul(ad, b1d.t())) * torch.matmul(ad, b2d.t())]
    forms["a"] = (form_a, False)
    forms["b"] = (form_b, True)
    forms["c"] = (form_c, True)
    return forms


def reference(kind, inp, dec):
    out = []
    if kind == "group":
        for a, b in zip(inp["a"], inp["b"]):
            out.append(dec(*a).double() @ dec(*b).double().t())
    else:
        x = dec(*inp["a"][0]).double()
        out.append(F.silu(x @ dec(*inp["b1"]).double().t()) * (x @ dec(*inp["b2"]).double().t()))
    return out


class Runner:
    """One form ready to run on the timing stream: plain calls or a graph replay."""

    def __init__(self, fn, graph, stream):
        self.stream = stream
        self.fn = fn
        self.graph = None
        self.out = None
        with torch.cuda.stream(stream):
            self.out = fn()  # untimed pass (and cuBLAS handle / workspace creation)
        stream.synchronize()
        if graph:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, stream=stream):
                self.out = fn()
            self.graph = g

    def __call__(self):
        with torch.cuda.stream(self.stream):
            if self.graph is not None:
                self.graph.replay()
            else:
                self.out = self.fn()


def measure(run, stream, flush):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def sample():
        with torch.cuda.stream(stream):
            flush.zero_()  # cold L2: 2x L2 written before the sample, outside the events
            start.record(stream)
            run()
            end.record(stream)
        end.synchronize()
        return start.elapsed_time(end) * 1e6  # ns

    t0 = time.perf_counter()
    warm = 0
    while True:
        sample()
        warm += 1
        if warm >= 1 + WARMUP_MIN_LAUNCHES and time.perf_counter() - t0 >= WARMUP_MIN_SECONDS:
            break
    xs, measured = [], 0.0
    t0 = time.perf_counter()
    reason = None
    while True:
        x = sample()
        xs.append(x)
        measured += x * 1e-9
        wall = time.perf_counter() - t0
        n = len(xs)
        if n >= STOP["min_samples"] and measured >= STOP["min_seconds"]:
            mean = statistics.fmean(xs)
            sem = statistics.stdev(xs) / math.sqrt(n)
            if sem / mean <= STOP["max_rel_sem"]:
                reason = "converged"
        if reason is None and n >= STOP["max_samples"]:
            reason = "max_samples"
        if reason is None and wall >= STOP["max_seconds"]:
            reason = "max_time"
        if reason:
            break
    mean = statistics.fmean(xs)
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return {
        "median_us": statistics.median(xs) / 1e3,
        "mean_us": mean / 1e3,
        "min_us": min(xs) / 1e3,
        "rel_sem": sd / math.sqrt(len(xs)) / mean,
        "samples": len(xs),
        "warmup_launches": warm,
        "stop_reason": reason,
    }


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def sanity(kind, shape, dec, device, forms_wanted):
    """Each form's output against a float64 torch reference on one small shape."""
    stream = torch.cuda.Stream()
    inp = make_inputs(kind, shape, 12345, device)
    ref = reference(kind, inp, dec)
    res = {}
    for name, (fn, graph) in build_forms(kind, inp, dec).items():
        if name not in forms_wanted:
            continue
        r = Runner(fn, graph, stream)
        r()
        stream.synchronize()
        got = torch.cat([o.double().flatten() for o in r.out])
        want = torch.cat([o.flatten() for o in ref])
        rel_l2 = (torch.linalg.vector_norm(got - want) / torch.linalg.vector_norm(want)).item()
        max_abs = (got - want).abs().max().item()
        finite = bool(torch.isfinite(got).all().item())
        res[name] = {"rel_l2_err": rel_l2, "max_abs_err": max_abs, "finite": finite,
                     "pass": finite and rel_l2 < 1e-2}
    return {"shape": shape, "forms": res}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problems", default="nvfp4_group_gemm,nvfp4_dual_gemm")
    ap.add_argument("--suite", default="benchmarks", choices=["tests", "benchmarks"])
    ap.add_argument("--shapes", default="", help="file with `web bench --dump-shapes` lines")
    ap.add_argument("--forms", default="a,b,c")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="", help="write the JSON document here (default: stdout)")
    args = ap.parse_args()

    if not torch.cuda.is_available():
        print("peer: no CUDA device visible to PyTorch", file=sys.stderr)
        return 3
    device = torch.device("cuda", 0)
    props = torch.cuda.get_device_properties(device)
    l2 = int(getattr(props, "L2_cache_size", 50 << 20))
    flush = torch.empty(2 * l2, dtype=torch.uint8, device=device)
    dec = Decoder(device)
    forms_wanted = args.forms.split(",")
    doc = {
        "tool": "pitchtank bench/peer/peer.py",
        "device": props.name,
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "cublas": "torch.matmul fp16 (fp32 accumulation per cuBLAS default)",
        "allow_fp16_reduced_precision_reduction": torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
        "l2_bytes": l2,
        "flush_bytes": 2 * l2,
        "cache_mode": "cold",
        "stop_rule": STOP,
        "warmup": {"min_launches": WARMUP_MIN_LAUNCHES, "min_seconds": WARMUP_MIN_SECONDS},
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "problems": {},
    }
    for prob in args.problems.split(","):
        kind = "dual" if "dual" in prob else "group"
        shapes = load_shapes(prob, args.suite, args.shapes)
        small = {"m": [33, 7] if kind == "group" else [33], "n": 128, "k": 256}
        pd = {"suite": "file" if args.shapes else args.suite, "sanity": sanity(kind, small, dec, device, forms_wanted), "shapes": []}
        for i, shape in enumerate(shapes):
            stream = torch.cuda.Stream()
            inp = make_inputs(kind, shape, args.seed + i, device)
            entry = {"m": shape["m"], "n": shape["n"], "k": shape["k"], "forms": {}}
            for name, (fn, graph) in build_forms(kind, inp, dec).items():
                if name not in forms_wanted:
                    continue
                r = Runner(fn, graph, stream)
                entry["forms"][name] = measure(r, stream, flush)
                entry["forms"][name]["graph"] = graph
                print(f"peer: {prob} shape {i} form {name}: median {entry['forms'][name]['median_us']:.2f} us "
                      f"(rel_sem {100 * entry['forms'][name]['rel_sem']:.3f}%, {entry['forms'][name]['samples']} samples, "
                      f"{entry['forms'][name]['stop_reason']})", file=sys.stderr, flush=True)
                del r
            pd["shapes"].append(entry)
            del inp
            torch.cuda.empty_cache()
        pd["geomean_median_us"] = {f: geomean([s["forms"][f]["median_us"] for s in pd["shapes"]]) for f in forms_wanted}
        doc["problems"][prob] = pd
    doc["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    text = json.dumps(doc, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
    bad = [(p, f) for p, pd in doc["problems"].items() for f, r in pd["sanity"]["forms"].items() if not r["pass"]]
    if bad:
        print(f"peer: sanity check failed for {bad}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
