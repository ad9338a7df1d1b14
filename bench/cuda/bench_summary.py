#!/usr/bin/env python3
"""The benchmark table of gpu_check.sh: cuda_bench rows with GB/s, ours/copy, the hot-key bound,
and ours/peer for each peer library that ran the row (ratio > 1: ours is faster).

  bench_summary.py --bench bench.json [--peers peers.json]
A rows file without results (cuda_bench --list-json, the dry run) prints the table with '-'.
Targets (checked here, not in a timed test): gather and gather_nd >= 0.85 x copy from
512 B slices and faster than every peer; hot-key scatter add within 3x of its byte bound.
"""
import argparse
import json
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--peers", default="")
    a = ap.parse_args()
    bench = load(a.bench)
    if not bench or "rows" not in bench:
        print("  bench_summary: no benchmark rows in %s" % a.bench)
        return 1
    peers = (load(a.peers) or {}).get("rows", {}) if a.peers else {}
    copy = bench.get("copy_gbps") or 0
    rows = bench["rows"]
    peer_names = sorted({p for r in peers.values() for p in r})
    print("\n  benchmark on %s, copy %.0f GB/s (better of D2D memcpy and float4 kernel)"
          % (bench.get("device") or "(no GPU: dry run)", copy))
    head = "  %-38s %10s %8s %7s %7s" % ("row", "ms", "GB/s", "x copy", "x bound")
    print(head + "".join(" %13s" % p.replace("torch.", "t.").replace("scatter_", "s_")[:13]
                         for p in peer_names))
    misses = []
    for r in rows:
        st = r.get("status", "-")
        ms = r.get("ms") or 0
        ok = st == "ok" and ms > 0
        gbps = r["bytes"] / (ms * 1e-3) / 1e9 if ok else 0
        vs_copy = gbps / copy if ok and copy else 0
        bound = ""
        if ok and copy and r["dist"] == "hot" and r["op"].startswith("scatter"):
            bound_ms = r["min_bytes"] / (copy * 1e9) * 1e3
            bound = "%7.1f" % (ms / bound_ms)
            if r["op"] == "scatter_add" and ms / bound_ms > 3:
                misses.append("%s: %.1fx its byte bound (target 3x)" % (r["name"], ms / bound_ms))
        line = "  %-38s %10s %8s %7s %7s" % (
            r["name"][:38], "%.4f" % ms if ok else st[:10], "%.0f" % gbps if ok else "-",
            "%.2f" % vs_copy if ok and copy else "-", bound or "-")
        for p in peer_names:
            v = peers.get(r["name"], {}).get(p)
            if not v:
                line += " %13s" % ""
            elif v["status"] == "ok" and v["ms"] > 0 and ok:
                ratio = v["ms"] / ms  # same bytes: ours/peer in GB/s = peer time / our time
                line += " %13.2f" % ratio
                if r["op"].startswith("gather") and ratio < 1:
                    misses.append("%s: slower than %s (%.2fx)" % (r["name"], p, ratio))
            else:
                line += " %13s" % v["status"][:13]
        if ok and r["op"].startswith("gather") and r["slice_bytes"] >= 512 and vs_copy < 0.85:
            misses.append("%s: %.2f x copy (target 0.85)" % (r["name"], vs_copy))
        print(line)
    measured = sum(1 for r in rows if r.get("status") == "ok")
    print("\n  %d of %d rows measured; targets missed: %d" % (measured, len(rows), len(misses)))
    for m in misses[:40]:
        print("    miss: " + m)
    return 0


if __name__ == "__main__":
    sys.exit(main())
