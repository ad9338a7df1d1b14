#!/usr/bin/env python3
"""bench_summary.py on made-up results (ctest cuda_bench_summary): the ratios it prints and the
targets it reports missed, so the GPU check's last table is right the first time it has numbers."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SUMMARY = os.path.join(HERE, "..", "..", "bench", "cuda", "bench_summary.py")


def row(name, op, dist, slice_bytes, ms, bytes_, status="ok"):
    return {"name": name, "op": op, "dtype": "float32", "dist": dist, "slice_bytes": slice_bytes,
            "table_rows": 1000, "n": 100, "depth": 1, "inner": 1, "bytes": bytes_,
            "min_bytes": bytes_, "status": status, "ms": ms, "gbps": 0, "samples": 5}


def main():
    # copy: 4e9 bytes in 1 ms = 4000 GB/s
    bench = {"device": "Test GPU", "copy_gbps": 4000.0, "rows": [
        row("copy_kernel/float32/16B/none", "copy_kernel", "none", 16, 1.0, 4e9),
        row("gather/float32/512B/uniform", "gather", "uniform", 512, 1.25, 4e9),   # 0.80 x copy
        row("gather/float32/4096B/uniform", "gather", "uniform", 4096, 1.0, 4e9),  # 1.00 x copy
        row("scatter_add/float32/4B/hot", "scatter_add", "hot", 4, 5.0, 4e9),      # 5x bound
        row("scatter_add/float32/512B/hot", "scatter_add", "hot", 512, 2.0, 4e9),  # 2x bound
        row("gather/float32/64B/zipf", "gather", "zipf", 64, 0, 4e9, "over_cap"),
    ]}
    peers = {"rows": {
        "gather/float32/4096B/uniform": {"torch.index_select": {"status": "ok", "ms": 0.5},
                                         "jax.take": {"status": "ok", "ms": 2.0}},
        "gather/float32/512B/uniform": {"torch.index_select": {"status": "error: x", "ms": 0}},
    }}
    d = tempfile.mkdtemp()
    bj, pj = os.path.join(d, "bench.json"), os.path.join(d, "peers.json")
    json.dump(bench, open(bj, "w"))
    json.dump(peers, open(pj, "w"))
    out = subprocess.run([sys.executable, SUMMARY, "--bench", bj, "--peers", pj],
                         capture_output=True, text=True)
    text = out.stdout
    print(text)
    want = [
        "gather/float32/512B/uniform: 0.80 x copy (target 0.85)",
        "scatter_add/float32/4B/hot: 5.0x its byte bound (target 3x)",
        "gather/float32/4096B/uniform: slower than torch.index_select (0.50x)",
        "5 of 6 rows measured; targets missed: 3",
    ]
    bad = [w for w in want if w not in text]
    if "scatter_add/float32/512B/hot: 2.0x" in text:
        bad.append("a hot key within 3x reported as missed")
    # jax row: 2.0 / 1.0 = 2.00 (ours twice as fast) must be printed, not reported missed
    if "2.00" not in text or "slower than jax.take" in text:
        bad.append("ours/peer ratio for jax.take")
    if out.returncode != 0:
        bad.append("exit status %d" % out.returncode)
    for b in bad:
        print("MISSING OR WRONG: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
