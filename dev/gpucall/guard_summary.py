"""Summarise the bench documents of dev/gpucall/guard.sh as Markdown.

One row per document: status, exit code, wall time, geomean speedup, what
the guard did, and each failed check or suspect reason (the first per
shape); for A/A runs, every shape's 95% interval. Each run is held to what
guard.sh expects of it by name (expected()): a cheat the guard must catch
ends "incorrect", an honest or A/A run "ok". Any other ending is marked
UNEXPECTED and makes the script exit 1, so a missed cheat is not left for
a reader to spot in the table.
"""
import glob
import json
import os
import sys


def expected(name):
    """The status guard.sh's run NAME must end with, or None (no rule).

    The unguarded replay cheat is expected to pass: it shows what the guard
    is for, not what it catches."""
    if name.startswith("cheat_"):
        return None if name.endswith("_unguarded") else "incorrect"
    if name.startswith(("honest_", "aa_")):
        return "ok"
    return None


def main(folder):
    print("| run | status | expected | exit | wall s | geomean speedup | checked / content changes / shapes moved | failures (first per shape) or suspect |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    aa = []
    unexpected = []
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        d = json.load(open(path))
        name = os.path.basename(path)[:-5]
        sm = d["summary"]
        g = sm.get("geomean_speedup")
        checked = changes = reloads = 0
        for s in d["shapes"]:
            gd = s.get("guard") or {}
            checked += sum(len(x) for x in gd.get("checked_samples", []))
            changes += gd.get("content_changes", 0)
            reloads += 1 if gd.get("move_round", -1) >= 0 else 0
        notes = []
        seen = set()
        for f in sm.get("failures", []):
            if f["shape"] in seen:
                continue
            seen.add(f["shape"])
            notes.append("shape %d %s %s: %s" % (f["shape"], f["role"], f["check"], f["detail"]))
        notes += sm.get("suspect", [])
        if d.get("error"):
            notes.append("error: " + d["error"][:200])
        want = expected(name)
        verdict = "-" if want is None else ("yes" if d["status"] == want else "UNEXPECTED (want %s)" % want)
        if want is not None and d["status"] != want:
            unexpected.append(name)
        print("| %s | %s | %s | %d | %.1f | %s | %d / %d / %d | %s |" % (
            name, d["status"], verdict, d["exit_code"], d["wall_seconds"],
            "%.4f" % g if g else "-", checked, changes, reloads, "; ".join(notes)))
        if d.get("aa"):
            aa.append((name, d))
    for name, d in aa:
        print()
        print("%s: per-shape speedup [95%% interval], variant / baseline median us" % name)
        print()
        for s in d["shapes"]:
            p = s.get("pairing")
            if not p:
                print("- shape %d: not paired (%s)" % (s["index"], s["skipped"]))
                continue
            iv = p["speedup"]
            ok = 0.99 <= iv["lo"] <= 1 <= iv["hi"] <= 1.01
            print("- shape %d: %.4f [%.4f, %.4f] %s; %.2f / %.2f us" % (
                s["index"], iv["point"], iv["lo"], iv["hi"], "inside [0.99, 1.01]" if ok else "OUTSIDE",
                s["variant_timing"]["stats"]["median_ns"] / 1e3, s["baseline_timing"]["stats"]["median_ns"] / 1e3))
    print()
    if unexpected:
        print("UNEXPECTED: %d run(s) did not end as guard.sh expects: %s" % (len(unexpected), ", ".join(unexpected)))
    else:
        print("every run with an expectation ended as expected")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
