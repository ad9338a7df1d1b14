#!/usr/bin/env python3
"""Peer libraries on the rows of cuda_bench (same card, same shapes, same index distributions).

PyTorch (index_select, embedding, advanced indexing for gather_nd, index_add_, scatter_reduce),
CuPy (take, cupyx.scatter_add / scatter_min / scatter_max) and JAX (jnp.take, .at[].add/min/max,
jitted, the output buffer donated). Each library runs in its own child process (one library's
memory pool never starves the next). Timing as cuda_bench: 2 warm-ups, then >= 5 back-to-back
calls with CUDA events between them (torch, cupy); JAX has no events, so each sample is wall time
of one call ended by block_until_ready. The median is kept; a row whose first call exceeds an
eighth of --row-cap-s (probe + 2 warm-ups + 5 samples must fit) is reported over_cap.

Indices are made on the device with cuda_bench's formulas (uniform and hot bit-identical,
sorted identical, zipf the same law in each library's float precision).

  peer_bench.py --rows rows.json [--json peers.json] [--budget-s S] [--row-cap-s S]
                [--libs torch,cupy,jax] [--dry-run]
--dry-run: parse the rows, print each library's call per row, run the calls at a tiny size on
whatever libraries import (CPU torch/numpy are fine), no GPU needed.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

LIBS = ("torch", "cupy", "jax")


def peer_calls(row):
    """{lib: [peer name, ...]} for a cuda_bench row."""
    op, dt = row["op"], row["dtype"]
    if op.startswith("copy"):
        return {"torch": ["copy_"], "cupy": ["copy"], "jax": []}
    if op == "gather":
        return {"torch": ["index_select", "embedding"], "cupy": ["take"], "jax": ["take"]}
    if op == "gather_nd":
        return {"torch": ["advanced_index"], "cupy": ["advanced_index"], "jax": ["advanced_index"]}
    cupy_ok = dt != "bfloat16"  # CuPy has no bfloat16
    if op == "scatter_add":
        return {"torch": ["index_add_", "scatter_reduce_sum"],
                "cupy": ["scatter_add"] if cupy_ok else [], "jax": ["at_add"]}
    if op == "scatter_add_det":
        return {"torch": ["index_add_deterministic"], "cupy": [], "jax": []}
    red = "amin" if op == "scatter_min" else "amax"
    return {"torch": ["scatter_reduce_" + red],
            "cupy": ["scatter_" + red[1:]] if cupy_ok else [], "jax": ["at_" + red[1:]]}


# ---- index formulas (cuda_bench's gen_indices), written per library over uint32 arithmetic

def mix32_int64(xp, i):
    """mix32 on int64 arrays (torch): every product masked to 32 bits."""
    m = 0xFFFFFFFF
    h = ((i & m) * 0x9E3779B1 & m) ^ (i >> 32)
    h ^= h >> 16
    h = h * 0x85EBCA6B & m
    h ^= h >> 13
    h = h * 0xC2B2AE35 & m
    h ^= h >> 16
    return h


def torch_indices(torch, row, dev):
    n, rows = row["n"], row["table_rows"]
    i = torch.arange(n, device=dev, dtype=torch.int64)
    d = row["dist"]
    if d == "uniform":
        r = mix32_int64(torch, i) % rows
    elif d == "sorted":
        r = i * rows // n
    elif d == "zipf":
        u = mix32_int64(torch, i).double() / 4294967296.0
        rank = torch.pow(float(rows), u).long() - 1
        r = (rank * 2654435761) % rows
    else:
        r = torch.full((n,), rows // 2, device=dev, dtype=torch.int64)
    return r


# ---- per-library runners (each returns {peer: (status, ms)})

def time_events(sync_events, call, cap_s):
    """sync_events() -> (new_event, elapsed_ms); returns (status, median ms, samples)."""
    new_event, elapsed = sync_events
    t0 = time.time()
    a, b = new_event(), new_event()
    a.record()
    call()
    b.record()
    b.synchronize()
    probe_s = max(time.time() - t0, elapsed(a, b) / 1e3)
    if probe_s * 8 > cap_s:  # the probe, 2 warm-ups and 5 samples must fit the cap
        return "over_cap", elapsed(a, b), 1
    samples = int(min(15, max(5, (cap_s - 3 * probe_s) / max(probe_s, 1e-6))))
    call()
    call()
    ev = [new_event() for _ in range(samples + 1)]
    ev[0].record()
    for k in range(samples):
        call()
        ev[k + 1].record()
    ev[-1].synchronize()
    ms = sorted(elapsed(ev[k], ev[k + 1]) for k in range(samples))
    return "ok", statistics.median(ms), samples


def run_torch(rows, cap_s, budget_s, tiny, save):
    import torch
    dev = "cuda" if torch.cuda.is_available() and not tiny else "cpu"
    dts = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
    out = {}
    t_start = time.time()
    if dev == "cuda":
        events = (lambda: torch.cuda.Event(enable_timing=True), lambda a, b: a.elapsed_time(b))
    else:  # CPU (dry run): wall-clock "events"
        class Ev:
            def record(self):
                self.t = time.perf_counter()

            def synchronize(self):
                pass
        events = (Ev, lambda a, b: (b.t - a.t) * 1e3)
    for row in rows:
        if time.time() - t_start > budget_s:
            break
        calls = peer_calls(row)["torch"]
        if not calls:
            continue
        dt = dts[row["dtype"]]
        cols = max(1, row["slice_bytes"] // (4 if row["dtype"] == "float32" else 2))
        try:
            if row["op"].startswith("copy"):
                a = torch.empty(row["n"] * 4, device=dev, dtype=torch.float32)
                b = torch.empty_like(a)
                fns = {"copy_": lambda: b.copy_(a)}
            else:
                idx = torch_indices(torch, row, dev)
                idx32 = idx.int()
                table = torch.full((row["table_rows"], cols), 0.5, device=dev, dtype=dt)
                if row["op"] == "gather":
                    fns = {"index_select": lambda: torch.index_select(table, 0, idx32),
                           "embedding": lambda: torch.nn.functional.embedding(idx32, table)}
                elif row["op"] == "gather_nd":
                    inner = row["inner"]
                    t3 = table.view(row["table_rows"] // inner, inner, cols)
                    i0, i1 = idx // inner, idx % inner
                    fns = {"advanced_index": lambda: t3[i0, i1]}
                else:
                    upd = torch.full((row["n"], cols), 0.25, device=dev, dtype=dt)
                    exp = idx.view(-1, 1).expand(-1, cols)
                    fns = {"index_add_": lambda: table.index_add_(0, idx, upd),
                           "scatter_reduce_sum": lambda: table.scatter_reduce_(0, exp, upd, "sum"),
                           "scatter_reduce_amin": lambda: table.scatter_reduce_(0, exp, upd, "amin"),
                           "scatter_reduce_amax": lambda: table.scatter_reduce_(0, exp, upd, "amax")}

                    def det():
                        torch.use_deterministic_algorithms(True)
                        try:
                            table.index_add_(0, idx, upd)
                        finally:
                            torch.use_deterministic_algorithms(False)
                    fns["index_add_deterministic"] = det
            for name in calls:
                st, ms, n = time_events(events, fns[name], cap_s)
                out.setdefault(row["name"], {})["torch." + name] = {"status": st, "ms": ms,
                                                                  "samples": n}
        except Exception as e:  # a peer's failure is a row result, not a crash
            for name in calls:
                out.setdefault(row["name"], {})["torch." + name] = {"status": "error: %s" % e,
                                                                  "ms": 0, "samples": 0}
        a = b = idx = idx32 = table = upd = exp = t3 = i0 = i1 = fns = None  # free before the next
        if dev == "cuda":
            torch.cuda.empty_cache()
        save(out)
    return out


def run_cupy(rows, cap_s, budget_s, tiny, save):
    import cupy as cp
    import cupyx
    out = {}
    t_start = time.time()
    events = (lambda: cp.cuda.Event(), lambda a, b: cp.cuda.get_elapsed_time(a, b))
    dts = {"float32": cp.float32, "float16": cp.float16}
    m = 0xFFFFFFFF
    for row in rows:
        if time.time() - t_start > budget_s:
            break
        calls = peer_calls(row)["cupy"]
        if not calls:
            continue
        try:
            if row["op"].startswith("copy"):
                a = cp.empty(row["n"] * 4, dtype=cp.float32)
                b = cp.empty_like(a)
                fns = {"copy": lambda: b.__setitem__(Ellipsis, a)}
            else:
                n, rows_ = row["n"], row["table_rows"]
                i = cp.arange(n, dtype=cp.uint64)
                h = ((i & m) * 0x9E3779B1 & m) ^ (i >> 32)
                h ^= h >> 16
                h = h * 0x85EBCA6B & m
                h ^= h >> 13
                h = h * 0xC2B2AE35 & m
                h ^= h >> 16
                d = row["dist"]
                if d == "uniform":
                    idx = h % rows_
                elif d == "sorted":
                    idx = i * rows_ // n
                elif d == "zipf":
                    rank = cp.power(float(rows_), h / 4294967296.0).astype(cp.uint64) - 1
                    idx = (rank * 2654435761) % rows_
                else:
                    idx = cp.full(n, rows_ // 2, dtype=cp.uint64)
                idx = idx.astype(cp.int32)
                dt = dts[row["dtype"]]
                cols = max(1, row["slice_bytes"] // cp.dtype(dt).itemsize)
                table = cp.full((rows_, cols), 0.5, dtype=dt)
                if row["op"] == "gather":
                    fns = {"take": lambda: cp.take(table, idx, axis=0)}
                elif row["op"] == "gather_nd":
                    inner = row["inner"]
                    t3 = table.reshape(rows_ // inner, inner, cols)
                    i0, i1 = idx // inner, idx % inner
                    fns = {"advanced_index": lambda: t3[i0, i1]}
                else:
                    upd = cp.full((n, cols), 0.25, dtype=dt)
                    fns = {"scatter_add": lambda: cupyx.scatter_add(table, idx, upd),
                           "scatter_min": lambda: cupyx.scatter_min(table, idx, upd),
                           "scatter_max": lambda: cupyx.scatter_max(table, idx, upd)}
            for name in calls:
                st, ms, ns = time_events(events, fns[name], cap_s)
                out.setdefault(row["name"], {})["cupy." + name] = {"status": st, "ms": ms,
                                                                 "samples": ns}
        except Exception as e:
            for name in calls:
                out.setdefault(row["name"], {})["cupy." + name] = {"status": "error: %s" % e,
                                                                 "ms": 0, "samples": 0}
        a = b = idx = table = upd = t3 = i0 = i1 = fns = None
        cp.get_default_memory_pool().free_all_blocks()
        save(out)
    return out


def run_jax(rows, cap_s, budget_s, tiny, save):
    import jax
    import jax.numpy as jnp
    out = {}
    t_start = time.time()
    dts = {"float32": jnp.float32, "float16": jnp.float16, "bfloat16": jnp.bfloat16}
    for row in rows:
        if time.time() - t_start > budget_s:
            break
        calls = peer_calls(row)["jax"]
        if not calls:
            continue
        try:
            n, rows_ = row["n"], row["table_rows"]
            i = jnp.arange(n, dtype=jnp.uint32)  # n < 2^32; the high word of i is 0
            h = i * jnp.uint32(0x9E3779B1)
            h ^= h >> 16
            h *= jnp.uint32(0x85EBCA6B)
            h ^= h >> 13
            h *= jnp.uint32(0xC2B2AE35)
            h ^= h >> 16
            d = row["dist"]
            if d == "uniform":
                idx = (h % jnp.uint32(rows_)).astype(jnp.int32)
            elif d == "sorted":
                idx = (i.astype(jnp.float32) * (rows_ / n)).astype(jnp.int32)  # float32: no x64
            elif d == "zipf":
                rank = (jnp.power(float(rows_), h / 4294967296.0).astype(jnp.uint32) - 1)
                idx = (rank * jnp.uint32(2654435761) % jnp.uint32(rows_)).astype(jnp.int32)
            else:
                idx = jnp.full((n,), rows_ // 2, dtype=jnp.int32)
            dt = dts[row["dtype"]]
            cols = max(1, row["slice_bytes"] // jnp.dtype(dt).itemsize)
            state = {"table": jnp.full((rows_, cols), 0.5, dtype=dt)}
            if row["op"] == "gather":
                f = jax.jit(lambda t, ix: jnp.take(t, ix, axis=0))
                fns = {"take": lambda: f(state["table"], idx)}
            elif row["op"] == "gather_nd":
                inner = row["inner"]
                f = jax.jit(lambda t, a, b: t.reshape(rows_ // inner, inner, cols)[a, b])
                i0, i1 = idx // inner, idx % inner
                fns = {"advanced_index": lambda: f(state["table"], i0, i1)}
            else:
                upd = jnp.full((n, cols), 0.25, dtype=dt)
                ops = {"at_add": lambda t, ix, u: t.at[ix].add(u),
                       "at_min": lambda t, ix, u: t.at[ix].min(u),
                       "at_max": lambda t, ix, u: t.at[ix].max(u)}
                fns = {}
                for name in calls:
                    g = jax.jit(ops[name], donate_argnums=0)

                    def call(g=g):
                        state["table"] = g(state["table"], idx, upd)
                        return state["table"]
                    fns[name] = call
            for name in calls:
                fn = fns[name]
                t0 = time.time()
                jax.block_until_ready(fn())
                probe = time.time() - t0
                if probe * 8 > cap_s:
                    st, ms, ns = "over_cap", probe * 1e3, 1
                else:
                    jax.block_until_ready(fn())
                    jax.block_until_ready(fn())
                    ns = int(min(15, max(5, (cap_s - 3 * probe) / max(probe, 1e-6))))
                    samples = []
                    for _ in range(ns):
                        t0 = time.perf_counter()
                        jax.block_until_ready(fn())
                        samples.append((time.perf_counter() - t0) * 1e3)
                    st, ms = "ok", statistics.median(samples)
                out.setdefault(row["name"], {})["jax." + name] = {"status": st, "ms": ms,
                                                                "samples": ns}
        except Exception as e:
            for name in calls:
                out.setdefault(row["name"], {})["jax." + name] = {"status": "error: %s" % e,
                                                                "ms": 0, "samples": 0}
        state = {}
        save(out)
    return out


RUNNERS = {"torch": run_torch, "cupy": run_cupy, "jax": run_jax}


def shrink(row):
    """The row at a tiny size, for the dry run (same op, dtype, distribution)."""
    r = dict(row)
    r["n"] = 64
    r["table_rows"] = 2048 if row["op"] == "gather_nd" else 256
    r["inner"] = min(row.get("inner", 1), 1024) if row["op"] == "gather_nd" else 1
    r["slice_bytes"] = min(row["slice_bytes"], 64)
    return r


def child(lib, rows, cap_s, budget_s, tiny, path):
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

    def save(res, status="running (cut short)"):
        # Rewritten after every row: a child killed at its time limit keeps what it measured.
        with open(path, "w") as f:
            json.dump({"lib": lib, "status": status, "rows": res}, f)
    # Scatter rows on a hot key are the slowest peers (CAS loops): last, so they cost no others.
    rows = sorted(rows, key=lambda r: r["op"].startswith("scatter") and r["dist"] == "hot")
    try:
        res = RUNNERS[lib](rows, cap_s, budget_s, tiny, save)
        status = "ok"
    except ImportError as e:
        res, status = {}, "not installed: %s" % e
    save(res, status)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", required=True, help="cuda_bench --list-json output")
    ap.add_argument("--json", default="", help="where to write the peer results")
    ap.add_argument("--budget-s", type=float, default=80)
    ap.add_argument("--row-cap-s", type=float, default=3)
    ap.add_argument("--libs", default=",".join(LIBS))
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--child", default="", help=argparse.SUPPRESS)
    ap.add_argument("--child-out", default="", help=argparse.SUPPRESS)
    a = ap.parse_args()
    try:
        rows = json.load(open(a.rows))["rows"]
    except (OSError, ValueError, KeyError) as e:
        print("peer_bench: cannot read rows from %s: %s" % (a.rows, e), file=sys.stderr)
        return 2
    libs = [x for x in a.libs.split(",") if x]
    bad = [x for x in libs if x not in LIBS]
    if bad:
        print("peer_bench: unknown libraries %s (known: %s)" % (bad, ", ".join(LIBS)),
              file=sys.stderr)
        return 2
    if a.dry_run:
        rows = [shrink(r) for r in rows]
    if a.child:
        child(a.child, rows, a.row_cap_s, a.budget_s, a.dry_run, a.child_out)
        return 0
    if a.dry_run:
        n = sum(len(v) for r in rows for v in peer_calls(r).values())
        print("peer_bench dry run: %d rows, %d peer calls" % (len(rows), n))
        for r in rows[:3]:
            print("  %-36s %s" % (r["name"], peer_calls(r)))
    result = {"libs": {}, "rows": {}}
    per_lib = a.budget_s / max(1, len(libs))
    for lib in libs:
        path = (a.json or "peers") + "." + lib + ".tmp"
        cmd = [sys.executable, os.path.abspath(__file__), "--rows", a.rows, "--child", lib,
               "--child-out", path, "--budget-s", str(per_lib), "--row-cap-s", str(a.row_cap_s)]
        if a.dry_run:
            cmd.append("--dry-run")
        t0 = time.time()
        try:  # the child stops starting rows at per_lib; a running row may need up to a cap more
            rc = subprocess.run(cmd, timeout=per_lib + a.row_cap_s + 5).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        try:
            got = json.load(open(path))
            os.remove(path)
        except (OSError, ValueError):
            got = {"status": "failed (rc=%s)" % rc, "rows": {}}
        result["libs"][lib] = got["status"]
        for name, peers in got["rows"].items():
            result["rows"].setdefault(name, {}).update(peers)
        print("peer_bench: %s: %s, %d rows, %.0fs" % (lib, got["status"], len(got["rows"]),
                                                    time.time() - t0))
        if a.json:  # after every library: a run cut short keeps the libraries done
            with open(a.json, "w") as f:
                json.dump(result, f, indent=1)
    if a.dry_run:
        # Every library that imports here must have run every call without an error.
        errors = [(n, p, v["status"]) for n, ps in result["rows"].items() for p, v in ps.items()
                  if v["status"].startswith("error")]
        for e in errors[:10]:
            print("peer_bench dry run: %s %s: %s" % e)
        return 1 if errors else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
