"""Did one injected bug fail the run, and only as that bug? Reads the injected run's report.
Usage: injected_verdicts.py REPORT KIND (injected_check.sh, injected_module_check.sh).
Exit status: 0 the bug failed cases, all in the ops it is injected into; 1 otherwise."""
import json, sys
report, kind = sys.argv[1], sys.argv[2]
cases = json.load(open(report))["cases"]
failing = [c for c in cases if c["verdict"] in ("FAILED", "DECLINED", "NONDETERMINISTIC")
           or (c["verdict"] == "UNSAFE" and not c.get("known_failure"))]
# The ops each bug is injected into: a failure elsewhere is not the injection's.
ops = {"abort": {"gather"}, "bad_index": {"gather"}, "declined": {"tensor_scatter_nd_add"},
       "declined_own_words": {"gather"},
       "wrong_value": {"tensor_scatter_nd_min", "tensor_scatter_nd_max"},
       "flush16": {"scatter_nd", "tensor_scatter_nd_update", "tensor_scatter_nd_add",
                   "tensor_scatter_nd_sub", "tensor_scatter_nd_min", "tensor_scatter_nd_max"},
       "flush_untouched": {"tensor_scatter_nd_add", "tensor_scatter_nd_sub",
                           "tensor_scatter_nd_min", "tensor_scatter_nd_max"},
       "wrapped_garbage": {"gather", "gather_nd", "scatter_nd", "tensor_scatter_nd_update",
                           "tensor_scatter_nd_add", "tensor_scatter_nd_sub",
                           "tensor_scatter_nd_min", "tensor_scatter_nd_max"},
       "large_one_element": {"gather", "gather_nd", "scatter_nd", "tensor_scatter_nd_update",
                             "tensor_scatter_nd_add", "tensor_scatter_nd_sub",
                             "tensor_scatter_nd_min", "tensor_scatter_nd_max"}}[kind]
elsewhere = [c for c in failing if c["op"] not in ops]
# A one-element error in a large output: only the sampler's large cases have one.
if kind == "large_one_element":
    elsewhere += [c for c in failing if not c["name"].endswith("/large")
                  and "/large/" not in c["name"]]
if elsewhere:
    print(f"{len(elsewhere)} failures outside the injected ops, e.g. {elsewhere[0]['name']}")
    sys.exit(1)
print(f"{kind}: {len(failing)} failing cases;",
      sum(c["verdict"] == "XFAIL" for c in cases), "XFAIL")
for c in failing[:3]:
    print(" ", c["verdict"], c["name"], "-", c["reason"][:160])
if not failing:
    print(f"the injected {kind} made no case fail")
sys.exit(0 if failing else 1)
