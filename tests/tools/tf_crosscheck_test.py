"""Unit tests of tools/tf_crosscheck.py that need numpy and ml_dtypes but not TensorFlow.

Run: python tests/tools/tf_crosscheck_test.py   (scripts/tf_crosscheck.sh runs them first)
"""

import base64
import struct
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import numpy as np  # noqa: E402

import tf_crosscheck as tc  # noqa: E402


def bits16(arr):
    return arr.view(np.uint16).tolist()


class DecodeTest(unittest.TestCase):
    def test_data_b64_is_raw_little_endian(self):
        raw = struct.pack("<3f", 1.5, -0.0, float("inf"))
        t = tc.decode_tensor({"dtype": "float32", "shape": [3],
                              "data_b64": base64.b64encode(raw).decode()})
        self.assertEqual(t.tobytes(), raw)

    def test_b64_length_must_match_shape(self):
        with self.assertRaises(tc.CaseError):
            tc.decode_tensor({"dtype": "int32", "shape": [2], "data_b64": "AAAAAA=="})

    def test_float_words_keep_bits(self):
        t = tc.decode_tensor({"dtype": "float16", "shape": [4],
                              "data": ["nan", "-nan", "-0.0", "-inf"]})
        self.assertEqual(bits16(t), [0x7E00, 0xFE00, 0x8000, 0xFC00])
        b = tc.decode_tensor({"dtype": "bfloat16", "shape": [2], "data": ["nan", "-nan"]})
        self.assertEqual(bits16(b), [0x7FC0, 0xFFC0])

    def test_half_types_round_once_from_double(self):
        # 1 + 2^-8 + 2^-30 is just above the bfloat16 midpoint 1 + 2^-8: nearest is 1 + 2^-7.
        # Rounding through float32 first would land on the midpoint and then round to 1.0.
        b = tc.decode_tensor({"dtype": "bfloat16", "shape": [1], "data": [1 + 2**-8 + 2**-30]})
        self.assertEqual(bits16(b), [0x3F81])
        h = tc.decode_tensor({"dtype": "float16", "shape": [1], "data": [1 + 2**-11 + 2**-40]})
        self.assertEqual(bits16(h), [0x3C01])

    def test_int64_beyond_2_53_as_text(self):
        t = tc.decode_tensor({"dtype": "uint64", "shape": [1], "data": ["18446744073709551615"]})
        self.assertEqual(int(t[0]), 2**64 - 1)
        with self.assertRaises(tc.CaseError):
            tc.decode_tensor({"dtype": "int8", "shape": [1], "data": [128]})

    def test_fill_and_iota(self):
        self.assertEqual(tc.decode_tensor({"dtype": "int16", "shape": [2, 2], "iota": -1})
                         .tolist(), [[-1, 0], [1, 2]])
        self.assertEqual(tc.decode_tensor({"dtype": "string", "shape": [2], "iota": 9}).tolist(),
                         [b"9", b"10"])
        self.assertEqual(tc.decode_tensor({"dtype": "bool", "shape": [0, 3], "fill": True}).shape,
                         (0, 3))
        with self.assertRaises(tc.CaseError):
            tc.decode_tensor({"dtype": "uint8", "shape": [3], "iota": 254})
        with self.assertRaises(tc.CaseError):
            tc.decode_tensor({"dtype": "bool", "shape": [1], "iota": 0})

    def test_complex_pairs_and_strings(self):
        c = tc.decode_tensor({"dtype": "complex64", "shape": [1], "data": [[1, "-0.0"]]})
        self.assertEqual(c[0], np.complex64(1 - 0j))
        self.assertTrue(np.signbit(c[0].imag))
        s = tc.decode_tensor({"dtype": "string", "shape": [1],
                              "data_b64": [base64.b64encode(b"\xff\x00").decode()]})
        self.assertEqual(s[0], b"\xff\x00")

    def test_exactly_one_data_field(self):
        with self.assertRaises(tc.CaseError):
            tc.decode_tensor({"dtype": "int32", "shape": [1], "data": [1], "fill": 1})


class MessageTest(unittest.TestCase):
    def test_strips_eager_decorations_only(self):
        prefix = "{{function_node __wrapped__GatherNd_device_/job:localhost/replica:0/task:0/" \
                 "device:CPU:0}} "
        self.assertEqual(
            tc.clean_tf_message(prefix + "indices[0] = [5, 0] does not index into param shape "
                                "[2,2], node name: GatherNd [Op:GatherNd] name: "),
            "indices[0] = [5, 0] does not index into param shape [2,2]")
        # The kernel's own trailing space (a policy "IGNORE ") is kept.
        self.assertEqual(
            tc.clean_tf_message(prefix + "Unknown bad indices handling attribute: IGNORE  "
                                "[Op:TensorScatterAdd]"),
            "Unknown bad indices handling attribute: IGNORE ")

    def test_classification(self):
        self.assertEqual(tc.classify_tf_error("InvalidArgumentError",
                                              "indices[1] = 7 is not in [0, 3)")[0], "bad_index")
        self.assertEqual(tc.classify_tf_error("InvalidArgumentError",
                                              "params must be at least 1 dimensional")[0],
                         "invalid_argument")
        self.assertEqual(tc.classify_tf_error(
            "InvalidArgumentError",
            "Value for attr 'Tindices' of uint8 is not in the list of allowed values: int32")[0],
            "unsupported")
        cls, msg = tc.classify_tf_error("NotFoundError",
                                        "Could not find device for node: X\nAll kernels...")
        self.assertEqual((cls, msg), ("unsupported", "Could not find device for node: X"))
        self.assertEqual(tc.classify_tf_error("ValueError", "negative batch_dims")[0],
                         "invalid_argument")


class CompareTest(unittest.TestCase):
    def case(self, expect):
        return {"gscheck_case": 1, "op": "gather", "expect": expect}

    def test_outputs_compare_bits(self):
        want = {"dtype": "float32", "shape": [2], "data": ["-0.0", 1]}
        same = np.array([-0.0, 1.0], dtype=np.float32)
        other = np.array([0.0, 1.0], dtype=np.float32)
        self.assertEqual(tc.compare_case(self.case({"output": want}), {"output": same}),
                         (True, None))
        agree, details = tc.compare_case(self.case({"output": want}), {"output": other})
        self.assertFalse(agree)
        self.assertEqual(details["kind"], "output_differs")
        self.assertEqual(details["difference"]["differing"], 1)

    def test_nan_bits_are_their_own_kind(self):
        want = {"dtype": "bfloat16", "shape": [2], "data_b64": base64.b64encode(
            struct.pack("<2H", 0x3F80, 0xFFC5)).decode()}
        got = np.frombuffer(struct.pack("<2H", 0x3F80, 0x7FC0), dtype=np.uint16)
        import ml_dtypes  # noqa: PLC0415

        _, d = tc.compare_case(self.case({"output": want}),
                               {"output": got.view(ml_dtypes.bfloat16)})
        self.assertEqual(d["kind"], "output_nan_bits_differ")
        self.assertEqual(d["difference"]["examples"][0]["tf"], "nan (0x7fc0)")
        self.assertEqual(d["difference"]["examples"][0]["reference"], "nan (0xffc5)")

    def test_subnormal_flushes_are_their_own_kind(self):
        want = {"dtype": "float32", "shape": [2], "data_b64": base64.b64encode(
            struct.pack("<2I", 0x3F800000, 0x80000001)).decode()}
        got = np.frombuffer(struct.pack("<2I", 0x3F800000, 0x00000000), dtype=np.float32)
        case = self.case({"output": want})
        case["inputs"] = {"updates": {"dtype": "float32", "shape": [1], "data_b64": base64.b64encode(
            struct.pack("<I", 0x80000001)).decode()}}
        _, d = tc.compare_case(case, {"output": got})
        self.assertEqual(d["kind"], "output_subnormal_flushed")
        # Without a subnormal input the same difference is a real one.
        _, d = tc.compare_case(self.case({"output": want}), {"output": got})
        self.assertEqual(d["kind"], "output_differs")
        # A difference larger than the smallest normal is a real one.
        got = np.frombuffer(struct.pack("<2I", 0x3F800000, 0x00800001), dtype=np.float32)
        _, d = tc.compare_case(case, {"output": got})
        self.assertEqual(d["kind"], "output_differs")
        cwant = {"dtype": "complex64", "shape": [1], "data_b64": base64.b64encode(
            struct.pack("<2I", 0x3F800000, 0x00800001)).decode()}
        cgot = np.frombuffer(struct.pack("<2I", 0x3F800000, 0x00800000), dtype=np.complex64)
        ccase = self.case({"output": cwant})
        ccase["inputs"] = case["inputs"]
        _, d = tc.compare_case(ccase, {"output": cgot})
        self.assertEqual(d["kind"], "output_subnormal_flushed")
        # Subnormal operands that sum past the smallest normal read as zeros: TensorFlow's -0
        # for the reference's -0x00800001 (found by a large complex64 sub), beside a NaN part
        # both sides have; TensorFlow's nonzero value that far off stays a real difference.
        cwant = {"dtype": "complex64", "shape": [2], "data_b64": base64.b64encode(
            struct.pack("<4I", 0x80800001, 0x7F800000, 0x807FFFFF, 0xFFC00000)).decode()}
        ccase = self.case({"output": cwant})
        ccase["inputs"] = case["inputs"]
        cgot = np.frombuffer(struct.pack("<4I", 0x80000000, 0x7F800000, 0x00000000, 0xFFC00000),
                             dtype=np.complex64)
        _, d = tc.compare_case(ccase, {"output": cgot})
        self.assertEqual(d["kind"], "output_subnormal_flushed")
        cgot = np.frombuffer(struct.pack("<4I", 0x00800001, 0x7F800000, 0x00000000, 0xFFC00000),
                             dtype=np.complex64)
        _, d = tc.compare_case(ccase, {"output": cgot})
        self.assertEqual(d["kind"], "output_differs")

    def test_empty_and_complex_outputs(self):
        empty = {"dtype": "uint8", "shape": [0, 3], "data": []}
        self.assertEqual(tc.compare_case(self.case({"output": empty}),
                                         {"output": np.zeros([0, 3], dtype=np.uint8)}),
                         (True, None))
        want = {"dtype": "complex128", "shape": [2], "data": [[1, 2], [3, "-0.0"]]}
        got = np.array([1 + 2j, 3 + 0j], dtype=np.complex128)
        _, d = tc.compare_case(self.case({"output": want}), {"output": got})
        self.assertEqual(d["difference"]["differing"], 1)
        self.assertEqual(d["difference"]["examples"][0]["flat_index"], 1)

    def test_shape_and_dtype_matter(self):
        want = {"dtype": "int32", "shape": [1, 1], "data": [3]}
        _, d = tc.compare_case(self.case({"output": want}),
                               {"output": np.array([3], dtype=np.int32)})
        self.assertEqual(d["difference"]["why"], "shape")
        _, d = tc.compare_case(self.case({"output": want}),
                               {"output": np.array([[3]], dtype=np.int64)})
        self.assertEqual(d["difference"]["why"], "dtype")

    def test_errors_compare_class_then_regex(self):
        exp = {"error": {"class": "bad_index", "message": r"^indices\[0\] = 5 is not in \[0, 3\)$"}}
        ok = {"error": {"class": "bad_index", "message": "indices[0] = 5 is not in [0, 3)"}}
        self.assertEqual(tc.compare_case(self.case(exp), ok), (True, None))
        wrong_text = {"error": {"class": "bad_index", "message": "indices[0] = 6 is not in [0, 3)"}}
        self.assertEqual(tc.compare_case(self.case(exp), wrong_text)[1]["kind"],
                         "error_message_differs")
        wrong_class = {"error": {"class": "invalid_argument", "message": "x"}}
        self.assertEqual(tc.compare_case(self.case(exp), wrong_class)[1]["kind"],
                         "error_class_differs")
        output = {"output": np.zeros([1], dtype=np.int32)}
        self.assertEqual(tc.compare_case(self.case(exp), output)[1]["kind"],
                         "tf_output_reference_error")

    def test_unsupported_compares_class_only(self):
        exp = {"error": {"class": "unsupported", "message": "^our own words$"}}
        tf_side = {"error": {"class": "unsupported", "message": "Could not find device for node"}}
        self.assertEqual(tc.compare_case(self.case(exp), tf_side), (True, None))


class ScreenTest(unittest.TestCase):
    def test_skips_what_tensorflow_cannot_confirm(self):
        base = {"gscheck_case": 1, "op": "gather", "inputs": {}}
        self.assertIn("tf-gpu", tc.screen({**base, "semantics": "tf-gpu",
                                           "expect": {"error": {"class": "bad_index"}}}, 1 << 30))
        self.assertEqual(tc.screen(base, 1 << 30), "no expect")
        self.assertIn("resource_exhausted",
                      tc.screen({**base, "expect": {"error": {"class": "resource_exhausted"}}},
                                1 << 30))
        big = {**base, "expect": {"error": {"class": "bad_index"}},
               "inputs": {"params": {"dtype": "float64", "shape": [1 << 20], "fill": 0},
                          "indices": {"dtype": "int32", "shape": [1], "data": [0]}}}
        self.assertIn("over --max-bytes", tc.screen(big, 1 << 20))
        self.assertIsNone(tc.screen(big, 1 << 30))
        big_out = {**base, "expect": {"output": {"dtype": "bool", "shape": [1 << 21], "fill": 0}},
                   "inputs": {"params": {"dtype": "bool", "shape": [1], "data": [False]},
                              "indices": {"dtype": "int32", "shape": [1 << 21], "fill": 0}}}
        self.assertIn("over --max-bytes", tc.screen(big_out, 1 << 22))


if __name__ == "__main__":
    unittest.main()
