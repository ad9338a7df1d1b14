#!/usr/bin/env python3
"""JUnit output against a schema and an XML parser, for every verdict and every character.

A real report (`gscheck run --backend reference`) is rewritten so that its cases carry every
verdict, with and without --strict, and reasons, known-failure texts and names that hold every
Unicode scalar value (U+0000..U+10FFFF without the surrogates, which JSON cannot carry alone;
tests/reports/report_test.cc covers raw bytes). `gscheck report merge` writes its JUnit file,
which must
- validate against tests/reports/junit.xsd (xmllint --schema),
- parse with Python's XML parser, every attribute and text giving back the original characters,
  with exactly the characters XML 1.0 forbids written as \\xNN per UTF-8 byte,
- count in each suite's and the document's tests/failures/errors/skipped exactly the testcase,
  failure, error and skipped elements under them, each case carrying the element its verdict
  maps to (docs/report_format.md).

usage: junit_schema_test.py --gscheck PATH --source DIR [unittest args]
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

GSCHECK = ""
SOURCE = ""

VERDICTS = ["PASSED", "FAILED", "NONDETERMINISTIC", "DECLINED", "MISTRUSTED", "UNIMPLEMENTED",
            "SKIPPED", "XFAIL", "XPASS", "UNSAFE"]


def xml_char(cp):
    """XML 1.0's Char production."""
    return cp in (0x9, 0xA, 0xD) or 0x20 <= cp <= 0xD7FF or 0xE000 <= cp <= 0xFFFD or \
        0x10000 <= cp <= 0x10FFFF


def as_written(text):
    """What a parser must read back: forbidden characters as \\xNN per UTF-8 byte."""
    out = []
    for ch in text:
        if xml_char(ord(ch)):
            out.append(ch)
        else:
            out.extend("\\x%02x" % b for b in ch.encode("utf-8"))
    return "".join(out)


def every_scalar_value():
    return [chr(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]


def element_of(verdict, strict):
    """The child element a testcase of this verdict carries (None: a plain pass)."""
    if verdict in ("FAILED", "NONDETERMINISTIC", "DECLINED", "UNSAFE"):
        return "failure"
    if verdict == "MISTRUSTED":
        return "error"
    if verdict in ("UNIMPLEMENTED", "SKIPPED", "XFAIL"):
        return "skipped"
    if verdict == "XPASS" and strict:
        return "failure"
    return None


class JunitSchema(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="gscheck_junit_schema_")
        cls.dir = cls.tmp.name
        empty = os.path.join(cls.dir, "no_cases")
        os.mkdir(empty)
        base = os.path.join(cls.dir, "base.json")
        p = subprocess.run([GSCHECK, "run", "--backend", "reference", "--sweep", "72", "--seed",
                            "11", "--quiet", "--report", base, empty], capture_output=True,
                           text=True, timeout=300)
        assert p.returncode in (0, 1), p.stderr
        with open(base, encoding="utf-8") as f:
            cls.base = json.load(f)
        assert len(cls.base["cases"]) == 72, len(cls.base["cases"])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def build(self, strict, seed):
        """The base report with every verdict and all characters spread over its cases."""
        rng = random.Random(seed)
        report = json.loads(json.dumps(self.base))
        report["strict"] = strict
        chars = every_scalar_value()
        rng.shuffle(chars)
        cases = report["cases"]
        per = len(chars) // len(cases) + 1
        verdicts = VERDICTS * (len(cases) // len(VERDICTS) + 1)
        rng.shuffle(verdicts)
        for i, c in enumerate(cases):
            text = "".join(chars[i * per:(i + 1) * per])
            cut = len(text) // 2
            c["verdict"] = verdicts[i]
            c["reason"] = text[:cut]
            # Names are attributes too: a few characters each, the name unique by its prefix.
            c["name"] = "%s#%d %s" % (c["name"], i, text[cut:cut + 40])
            c.pop("known_failure", None)
            if verdicts[i] in ("XFAIL", "XPASS"):
                c["known_failure"] = {"verdict": "FAILED", "entry": "entry %d" % i,
                                      "reason": text[cut:], "link": "https://example.org/%d" % i}
            else:
                c["reason"] += text[cut:]
        return report

    def merge(self, report, name):
        src, out, junit = (os.path.join(self.dir, name + s) for s in (".in.json", ".json", ".xml"))
        with open(src, "w", encoding="utf-8") as f:
            json.dump(report, f, ensure_ascii=False)
        p = subprocess.run([GSCHECK, "report", "merge", src, "-o", out, "--junit", junit],
                           capture_output=True, text=True, timeout=300)
        self.assertIn(p.returncode, (0, 1), p.stderr[-3000:])
        return junit

    def check(self, strict, seed):
        report = self.build(strict, seed)
        junit = self.merge(report, "strict%d_seed%d" % (strict, seed))
        p = subprocess.run(["xmllint", "--noout", "--schema",
                            os.path.join(SOURCE, "tests", "reports", "junit.xsd"), junit],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        root = ET.parse(junit).getroot()
        by_name = {as_written(c["name"]): c for c in report["cases"]}
        self.assertEqual(len(by_name), len(report["cases"]))
        totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        seen = set()
        for suite in root.findall("testsuite"):
            cases = suite.findall("testcase")
            counts = {"tests": len(cases),
                      "failures": sum(1 for t in cases if t.find("failure") is not None),
                      "errors": sum(1 for t in cases if t.find("error") is not None),
                      "skipped": sum(1 for t in cases if t.find("skipped") is not None)}
            for k, v in counts.items():
                self.assertEqual(int(suite.get(k)), v, "%s: %s" % (suite.get("name"), k))
                totals[k] += v
            for t in cases:
                name = t.get("name")
                self.assertIn(name, by_name)
                seen.add(name)
                c = by_name[name]
                kids = [e.tag for e in t if e.tag in ("failure", "error", "skipped")]
                want = element_of(c["verdict"], strict)
                self.assertEqual(kids, [want] if want else [], "%s %s" % (c["verdict"], name))
                if want is None:
                    continue
                message = t.find(want).get("message")
                if c["verdict"] in ("UNIMPLEMENTED", "SKIPPED"):
                    expect = c["verdict"] + ": " + as_written(c["reason"])
                elif c["verdict"] == "XFAIL":
                    k = c["known_failure"]
                    expect = "XFAIL: " + as_written(k["reason"] + " (" + k["link"] + ")")
                elif c["verdict"] == "XPASS":
                    k = c["known_failure"]
                    expect = "XPASS: known to fail (" + as_written(k["reason"]) + ", " + \
                        k["link"] + ") but passed"
                else:
                    expect = as_written(c["reason"])
                self.assertEqual(message, expect, "%s %s" % (c["verdict"], name))
        self.assertEqual(seen, set(by_name))
        for k, v in totals.items():
            self.assertEqual(int(root.get(k)), v, "document " + k)

    def test_every_verdict_and_character(self):
        self.check(strict=False, seed=1)

    def test_every_verdict_and_character_strict(self):
        self.check(strict=True, seed=2)

    def test_the_expectation_itself(self):
        # The model above: allowed characters pass, forbidden ones are their UTF-8 bytes.
        self.assertEqual(as_written("a\tb\n\r\u0085\ufffd"), "a\tb\n\r\u0085\ufffd")
        self.assertEqual(as_written("\x00\x1f\ufffe\uffff"),
                         "\\x00\\x1f\\xef\\xbf\\xbe\\xef\\xbf\\xbf")
        self.assertEqual(sum(1 for ch in every_scalar_value() if not xml_char(ord(ch))), 31)


def main():
    global GSCHECK, SOURCE
    ap = argparse.ArgumentParser()
    ap.add_argument("--gscheck", required=True)
    ap.add_argument("--source", required=True)
    args, rest = ap.parse_known_args()
    GSCHECK, SOURCE = args.gscheck, args.source
    unittest.main(argv=[sys.argv[0], *rest])


if __name__ == "__main__":
    main()
