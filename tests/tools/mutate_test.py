"""Unit tests of tools/mutate.py that need no build: catalogue checks, stale snippets, the
ninja command splitting and the kill-table summary (the end-to-end run is ctest mutation.fast)."""

import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import mutate  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def catalogue(mutants, folders=None):
    return {"checks": {"unit": {"kind": "command", "argv": ["true"]}},
            "folders": folders or {"f": {"checks": ["unit"]}}, "mutants": mutants}


def mutant(**kw):
    m = {"id": "m1", "file": "a.cc", "original": "x < n", "replacement": "x <= n",
         "description": "off by one", "folder": "f", "fast": False}
    m.update(kw)
    return m


class CatalogueTest(unittest.TestCase):
    def write(self, tmp, cat):
        p = Path(tmp) / "cat.json"
        p.write_text(json.dumps(cat))
        return p

    def test_the_real_catalogue_loads_and_applies(self):
        cat = mutate.load_catalogue(ROOT / "tools" / "mutants.json", ROOT)
        self.assertGreaterEqual(len(cat["mutants"]), 40)
        for m in cat["mutants"]:
            mutate.mutated_text(m, ROOT)  # raises when stale
        folders = {m["folder"] for m in cat["mutants"]}
        self.assertTrue({"cuda", "reference", "compare", "backends", "plugins"} <= folders)
        for m in cat["mutants"]:
            if "equivalent" in m:
                self.assertGreater(len(m["equivalent"]), 40, m["id"])  # a written reason

    def test_malformed_catalogues_are_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            for bad in (catalogue([mutant(), mutant()]),                 # duplicate id
                        catalogue([mutant(folder="nowhere")]),           # unknown folder
                        catalogue([mutant(checks=["nothing"])]),          # unknown check
                        catalogue([mutant(replacement="x < n")]),         # no change
                        {"checks": {}, "mutants": []}):                   # no folders
                with self.assertRaises(mutate.CatalogueError):
                    mutate.load_catalogue(self.write(tmp, bad), Path(tmp))
            m = dict(mutant())
            del m["description"]
            with self.assertRaises(mutate.CatalogueError):
                mutate.load_catalogue(self.write(tmp, catalogue([m])), Path(tmp))

    def test_snippet_must_occur_exactly_once(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp)
            (src / "a.cc").write_text("if (x < n) f();\n")
            self.assertEqual(mutate.mutated_text(mutant(), src), "if (x <= n) f();\n")
            (src / "a.cc").write_text("if (x < n && x < n) f();\n")
            with self.assertRaisesRegex(mutate.CatalogueError, "STALE.*2 times"):
                mutate.mutated_text(mutant(), src)
            (src / "a.cc").write_text("if (i < n) f();\n")
            with self.assertRaisesRegex(mutate.CatalogueError, "STALE.*0 times"):
                mutate.mutated_text(mutant(), src)
            with self.assertRaisesRegex(mutate.CatalogueError, "STALE.*cannot read"):
                mutate.mutated_text(mutant(file="gone.cc"), src)


class CommandsTest(unittest.TestCase):
    def test_link_commands_drop_the_post_build_steps(self):
        cmd = (": && /usr/bin/c++ -O2 a.o -o tests/t lib.a && cd /b/tests && /usr/bin/cmake "
               "-D TEST_TARGET=t -P x.cmake && :")
        self.assertEqual(mutate.subcommands(cmd), [["/usr/bin/c++", "-O2", "a.o", "-o", "tests/t",
                                                    "lib.a"]])

    def test_archive_commands_keep_every_step(self):
        cmd = ": && /usr/bin/cmake -E rm -f l.a && /usr/bin/ar qc l.a a.o && /usr/bin/ranlib l.a && :"
        self.assertEqual([g[0] for g in mutate.subcommands(cmd)],
                         ["/usr/bin/cmake", "/usr/bin/ar", "/usr/bin/ranlib"])


class TableTest(unittest.TestCase):
    def test_summary_counts_survivors_apart(self):
        table = {"mutants": [
            {"id": "a", "folder": "cuda", "status": "killed", "detect_seconds": 2.0,
             "description": "d", "killed_by": "unit", "build_seconds": 1},
            {"id": "b", "folder": "cuda", "status": "killed", "detect_seconds": 9.0,
             "description": "d", "killed_by": "unit", "build_seconds": 1},
            {"id": "c", "folder": "cuda", "status": "survived", "detect_seconds": 30.0,
             "description": "d", "killed_by": None, "build_seconds": 1},
            {"id": "d", "folder": "compare", "status": "equivalent", "detect_seconds": 30.0,
             "description": "d", "killed_by": None, "build_seconds": 1}]}
        s = mutate.write_table(None, table, 0.0)
        self.assertEqual(s["cuda"], {"mutants": 3, "killed": 2, "equivalent": 0, "other": 1,
                                     "median_detect_seconds": 9.0, "max_detect_seconds": 9.0})
        self.assertEqual(s["compare"]["equivalent"], 1)
        self.assertIn("| cuda | 3 | 2 | 0 | 1 |", mutate.markdown(table))


if __name__ == "__main__":
    unittest.main()
