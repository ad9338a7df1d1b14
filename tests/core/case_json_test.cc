#include "core/case_json.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

namespace gscheck {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// A fresh temporary directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("gscheck_case_json_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name, const std::string& text) const {
    const fs::path p = path_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

Tensor round_trip(const Tensor& t, TensorEncoding enc) {
  const json j = json::parse(tensor_to_json(t, enc).dump());  // through text, as on disk
  auto back = tensor_from_json(j, "t");
  EXPECT_TRUE(back.ok()) << back.error().message << "\n" << j.dump();
  return back.ok() ? std::move(back).value() : Tensor();
}

void expect_round_trips(const Tensor& t) {
  for (auto enc : {TensorEncoding::kNumbers, TensorEncoding::kBase64}) {
    Tensor back = round_trip(t, enc);
    EXPECT_TRUE(back.bit_equal(t)) << dtype_name(t.dtype()) << " encoding " << static_cast<int>(enc)
                                   << ": " << tensor_to_json(t, enc).dump();
  }
}

Float16 h(uint16_t b) { return {b}; }
BFloat16 bf(uint16_t b) { return {b}; }
float f32(uint32_t b) { return std::bit_cast<float>(b); }
double f64(uint64_t b) { return std::bit_cast<double>(b); }

TEST(CaseJson, EveryDTypeRoundTripsBitExactly) {
  using L32 = std::numeric_limits<float>;
  using L64 = std::numeric_limits<double>;
  expect_round_trips(Tensor::from_values<bool>(Shape{3}, {true, false, true}));
  expect_round_trips(Tensor::from_values<int8_t>(Shape{3}, {-128, 0, 127}));
  expect_round_trips(Tensor::from_values<int16_t>(Shape{2}, {-32768, 32767}));
  expect_round_trips(Tensor::from_values<int32_t>(Shape{2, 1}, {INT32_MIN, INT32_MAX}));
  expect_round_trips(Tensor::from_values<int64_t>(
      Shape{5}, {INT64_MIN, INT64_MAX, (int64_t{1} << 53) + 1, -(int64_t{1} << 53), 0}));
  expect_round_trips(Tensor::from_values<uint8_t>(Shape{2}, {0, 255}));
  expect_round_trips(Tensor::from_values<uint16_t>(Shape{2}, {0, 65535}));
  expect_round_trips(Tensor::from_values<uint32_t>(Shape{2}, {0, UINT32_MAX}));
  expect_round_trips(
      Tensor::from_values<uint64_t>(Shape{3}, {0, UINT64_MAX, (uint64_t{1} << 53) + 1}));
  expect_round_trips(
      Tensor::from_values<Float16>(Shape{9}, {h(0x3c00), h(0x8000), h(0x7c00), h(0xfc00), h(0x7e00),
                                              h(0xfe00), h(0x0001), h(0x7bff), h(0x2e66)}));
  expect_round_trips(Tensor::from_values<BFloat16>(
      Shape{7},
      {bf(0x3f80), bf(0x8000), bf(0x7f80), bf(0x7fc0), bf(0x0001), bf(0x7f7f), bf(0x3dcd)}));
  expect_round_trips(Tensor::from_values<float>(
      Shape{9}, {0.1f, -0.0f, L32::infinity(), -L32::infinity(), L32::quiet_NaN(),
                 L32::denorm_min(), L32::max(), L32::lowest(), 16777217.0f}));
  expect_round_trips(Tensor::from_values<double>(
      Shape{8}, {0.1, -0.0, L64::infinity(), L64::quiet_NaN(), -L64::quiet_NaN(), L64::denorm_min(),
                 L64::max(), 1.0 / 3.0}));
  expect_round_trips(
      Tensor::from_values<std::complex<float>>(Shape{2}, {{1.5f, -0.0f}, {L32::infinity(), 0.1f}}));
  expect_round_trips(Tensor::from_values<std::complex<double>>(Shape{1}, {{1.0 / 3.0, -2.0}}));
  expect_round_trips(
      Tensor::from_values<std::string>(Shape{3}, {"", "a\"b\\", "\xc3\xa9t\xc3\xa9"}));
  expect_round_trips(Tensor::from_values<float>(Shape{0, 3}, {}));
  expect_round_trips(Tensor::from_values<int32_t>(Shape{}, {7}));
}

TEST(CaseJson, NanPayloadsFallBackToBase64AndKeepTheirBits) {
  for (uint32_t bits : {0x7fc00001u, 0x7f800001u, 0xffc12345u}) {
    Tensor t = Tensor::from_values<float>(Shape{2}, {1.0f, f32(bits)});
    json j = tensor_to_json(t, TensorEncoding::kNumbers);
    EXPECT_FALSE(j.contains("data"));
    ASSERT_TRUE(j.contains("data_b64"));
    EXPECT_TRUE(round_trip(t, TensorEncoding::kNumbers).bit_equal(t));
  }
  Tensor d = Tensor::from_values<double>(Shape{1}, {f64(0x7ff0000000000001u)});
  EXPECT_TRUE(tensor_to_json(d, TensorEncoding::kNumbers).contains("data_b64"));
  EXPECT_TRUE(round_trip(d, TensorEncoding::kNumbers).bit_equal(d));
  Tensor half = Tensor::from_values<Float16>(Shape{1}, {h(0x7d01)});
  EXPECT_TRUE(tensor_to_json(half, TensorEncoding::kNumbers).contains("data_b64"));
  EXPECT_TRUE(round_trip(half, TensorEncoding::kNumbers).bit_equal(half));
  Tensor cplx = Tensor::from_values<std::complex<float>>(Shape{1}, {{1.0f, f32(0x7fc00002u)}});
  EXPECT_TRUE(tensor_to_json(cplx, TensorEncoding::kNumbers).contains("data_b64"));
  EXPECT_TRUE(round_trip(cplx, TensorEncoding::kNumbers).bit_equal(cplx));
}

TEST(CaseJson, ReadableNumbersForSpecialValues) {
  Tensor t = Tensor::from_values<float>(
      Shape{6},
      {-0.0f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
       std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(), 0.1f});
  EXPECT_EQ(tensor_to_json(t).dump(),
            R"({"data":["-0.0","inf","-inf","nan","-nan",0.1],"dtype":"float32","shape":[6]})");
  // Halves print as their shortest decimal, not the float's.
  Tensor half = Tensor::from_values<Float16>(Shape{2}, {h(0x2e66), h(0x3c00)});
  EXPECT_EQ(tensor_to_json(half)["data"].dump(), "[0.1,1.0]");
  Tensor big = Tensor::from_values<int64_t>(Shape{2}, {int64_t{1} << 53, (int64_t{1} << 53) + 1});
  EXPECT_EQ(tensor_to_json(big)["data"].dump(), R"([9007199254740992,"9007199254740993"])");
  Tensor cplx = Tensor::from_values<std::complex<float>>(Shape{1}, {{1.0f, -2.5f}});
  EXPECT_EQ(tensor_to_json(cplx)["data"].dump(), "[[1.0,-2.5]]");
}

TEST(CaseJson, HumanNumbersRoundToNearestEvenWithoutDoubleRounding) {
  auto parse = [](const std::string& dtype, const std::string& value) {
    return tensor_from_json(
        json::parse(R"({"dtype":")" + dtype + R"(","shape":[1],"data":[)" + value + "]}"), "t");
  };
  auto half = parse("float16", "0.1");
  ASSERT_TRUE(half.ok());
  EXPECT_EQ(half->data_as<Float16>()[0].bits, 0x2e66);
  // 1 + 2^-11 + 2^-40 is just above the float16 tie between 1 and 1+2^-10: rounds up. Rounding
  // through float first would drop the 2^-40 and round the tie to even (down).
  auto above_tie = parse("float16", "1.0004882812509094947017729282379150390625");
  ASSERT_TRUE(above_tie.ok());
  EXPECT_EQ(above_tie->data_as<Float16>()[0].bits, 0x3c01);
  auto tie = parse("float16", "1.00048828125");
  ASSERT_TRUE(tie.ok());
  EXPECT_EQ(tie->data_as<Float16>()[0].bits, 0x3c00);
  auto bfloat = parse("bfloat16", "1.003906250931322574615478515625");  // 1 + 2^-8 + 2^-30
  ASSERT_TRUE(bfloat.ok());
  EXPECT_EQ(bfloat->data_as<BFloat16>()[0].bits, 0x3f81);
  auto neg_zero = parse("float32", "\"-0.0\"");
  ASSERT_TRUE(neg_zero.ok());
  EXPECT_EQ(std::bit_cast<uint32_t>(neg_zero->data_as<float>()[0]), 0x80000000u);
  auto big = parse("uint64", "\"18446744073709551615\"");
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->data_as<uint64_t>()[0], UINT64_MAX);
  auto nan = parse("bfloat16", "\"-nan\"");
  ASSERT_TRUE(nan.ok());
  EXPECT_EQ(nan->data_as<BFloat16>()[0].bits, 0xffc0);
}

TEST(CaseJson, FillAndIota) {
  auto fill =
      tensor_from_json(json::parse(R"({"dtype":"float32","shape":[2,2],"fill":"-0.0"})"), "t");
  ASSERT_TRUE(fill.ok());
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(std::bit_cast<uint32_t>(fill->data_as<float>()[i]), 0x80000000u);
  auto iota = tensor_from_json(json::parse(R"({"dtype":"int8","shape":[3],"iota":-2})"), "t");
  ASSERT_TRUE(iota.ok());
  EXPECT_TRUE(iota->bit_equal(Tensor::from_values<int8_t>(Shape{3}, {-2, -1, 0})));
  auto fiota = tensor_from_json(json::parse(R"({"dtype":"float64","shape":[2],"iota":0.5})"), "t");
  ASSERT_TRUE(fiota.ok());
  EXPECT_TRUE(fiota->bit_equal(Tensor::from_values<double>(Shape{2}, {0.5, 1.5})));
  auto siota = tensor_from_json(json::parse(R"({"dtype":"string","shape":[2],"iota":9})"), "t");
  ASSERT_TRUE(siota.ok());
  EXPECT_EQ(siota->strings(), (std::vector<std::string>{"9", "10"}));
  auto ciota = tensor_from_json(json::parse(R"({"dtype":"complex64","shape":[2],"iota":1})"), "t");
  ASSERT_TRUE(ciota.ok());
  EXPECT_EQ(ciota->data_as<std::complex<float>>()[1], std::complex<float>(2.0f, 0.0f));
  auto sfill = tensor_from_json(json::parse(R"({"dtype":"string","shape":[2],"fill":"ab"})"), "t");
  ASSERT_TRUE(sfill.ok());
  EXPECT_EQ(sfill->strings(), (std::vector<std::string>{"ab", "ab"}));
  auto overflow = tensor_from_json(json::parse(R"({"dtype":"uint8","shape":[3],"iota":254})"), "t");
  ASSERT_FALSE(overflow.ok());
  EXPECT_NE(overflow.error().message.find("t.iota: iota from 254 over 3 elements"),
            std::string::npos)
      << overflow.error().message;
}

TEST(CaseJson, HugeTensorsAreRefusedBeforeAllocation) {
  auto huge = tensor_from_json(
      json::parse(R"({"dtype":"float32","shape":[1000000,1000000],"fill":0})"), "inputs.params");
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().cls, ErrorClass::kResourceExhausted);
  EXPECT_NE(huge.error().message.find("inputs.params"), std::string::npos);
  auto strings = tensor_from_json(
      json::parse(R"({"dtype":"string","shape":[1000000000],"iota":0})"), "t", int64_t{1} << 30);
  ASSERT_FALSE(strings.ok());
  EXPECT_EQ(strings.error().cls, ErrorClass::kResourceExhausted);
  auto overflow = tensor_from_json(
      json::parse(R"({"dtype":"float64","shape":[4611686018427387904,4],"fill":0})"), "t");
  ASSERT_FALSE(overflow.ok());
  // The budget covers the whole file: two tensors of 600 bytes do not fit in 1000.
  const json c = json::parse(R"({"gscheck_case":1,"name":"x","op":"gather","inputs":{
      "params":{"dtype":"float32","shape":[150],"fill":1},
      "indices":{"dtype":"int64","shape":[75],"fill":0}}})");
  EXPECT_TRUE(case_file_from_json(c, 1200).ok());
  auto over = case_file_from_json(c, 1000);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().cls, ErrorClass::kResourceExhausted);
  EXPECT_NE(over.error().message.find("inputs.params"), std::string::npos);
}

// A complete case file exercising every field.
const char* kFullCase = R"({
  "gscheck_case": 1,
  "name": "gather/full",
  "description": "every field",
  "op": "gather",
  "semantics": "tf-gpu",
  "attrs": {"axis": -1, "batch_dims": 1},
  "inputs": {
    "params": {"dtype": "bfloat16", "shape": [2, 3], "iota": 0},
    "indices": {"dtype": "int64", "shape": [2, 1], "data": [2, "0"]}
  },
  "expect": {"output": {"dtype": "bfloat16", "shape": [2, 1], "data": [2, 3]}}
})";

void expect_same(const CaseFile& a, const CaseFile& b) {
  EXPECT_EQ(a.c.name, b.c.name);
  EXPECT_EQ(a.c.op, b.c.op);
  EXPECT_EQ(a.c.semantics, b.c.semantics);
  EXPECT_EQ(a.c.batch_dims, b.c.batch_dims);
  EXPECT_EQ(a.c.bad_indices_policy, b.c.bad_indices_policy);
  EXPECT_EQ(a.description, b.description);
  auto same = [](const std::optional<Tensor>& x, const std::optional<Tensor>& y) {
    return x.has_value() == y.has_value() && (!x || x->bit_equal(*y));
  };
  EXPECT_TRUE(same(a.c.params, b.c.params));
  EXPECT_TRUE(same(a.c.indices, b.c.indices));
  EXPECT_TRUE(same(a.c.updates, b.c.updates));
  EXPECT_TRUE(same(a.c.tensor, b.c.tensor));
  EXPECT_TRUE(same(a.c.shape, b.c.shape));
  EXPECT_TRUE(same(a.c.axis, b.c.axis));
  ASSERT_EQ(a.expect.has_value(), b.expect.has_value());
  if (a.expect) {
    EXPECT_TRUE(same(a.expect->output, b.expect->output));
    EXPECT_EQ(a.expect->error_class, b.expect->error_class);
    EXPECT_EQ(a.expect->error_regex, b.expect->error_regex);
  }
}

TEST(CaseJson, CaseFileRoundTripsThroughDisk) {
  auto f = case_file_from_json(json::parse(kFullCase));
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->c.semantics, Semantics::kTfGpu);
  EXPECT_EQ(f->c.batch_dims, 1);
  ASSERT_TRUE(f->c.axis);
  EXPECT_TRUE(f->c.axis->bit_equal(Tensor::from_values<int32_t>(Shape{}, {-1})));
  ASSERT_TRUE(f->expect && f->expect->output);
  TempDir dir;
  for (auto enc : {TensorEncoding::kNumbers, TensorEncoding::kBase64}) {
    const std::string path = (dir.path() / "c.json").string();
    ASSERT_TRUE(save_case_file(path, *f, enc).ok());
    auto back = load_case_file(path);
    ASSERT_TRUE(back.ok()) << back.error().message;
    expect_same(*f, *back);
  }

  CaseFile scatter;
  scatter.c.name = "tensor_scatter_nd_update/strings";
  scatter.c.op = Op::kTensorScatterUpdate;
  scatter.c.bad_indices_policy = "IGNORE";
  scatter.c.tensor = Tensor::from_values<std::string>(Shape{2}, {"a", std::string("\xff\x00", 2)});
  scatter.c.indices = Tensor::from_values<int32_t>(Shape{1, 1}, {1});
  scatter.c.updates = Tensor::from_values<std::string>(Shape{1}, {"z"});
  scatter.expect = Expect{std::nullopt, ErrorClass::kBadIndex, "indices\\[0\\]"};
  const std::string text = case_file_text(scatter);
  EXPECT_NE(text.find("\"data_b64\": [\"YQ==\",\"/wA=\"]"), std::string::npos) << text;
  auto back = case_file_from_json(json::parse(text));
  ASSERT_TRUE(back.ok()) << back.error().message;
  expect_same(scatter, *back);

  CaseFile axis64;
  axis64.c.name = "gather/axis64";
  axis64.c.params = Tensor::from_values<float>(Shape{2}, {1, 2});
  axis64.c.indices = Tensor::from_values<int32_t>(Shape{1}, {0});
  axis64.c.axis = Tensor::from_values<int64_t>(Shape{}, {0});
  auto back64 = case_file_from_json(case_file_to_json(axis64));
  ASSERT_TRUE(back64.ok()) << back64.error().message;
  expect_same(axis64, *back64);
}

TEST(CaseJson, ApiLevelRoundTripsAndDefaultsToPython) {
  const std::string text =
      R"({"gscheck_case":1,"name":"k","op":"gather","api":"kernel","attrs":{"axis":0,"batch_dims":1},)"
      R"("inputs":{"params":{"dtype":"float32","shape":[2],"data":[1,2]},)"
      R"("indices":{"dtype":"int32","shape":[1],"data":[0]}}})";
  auto f = case_file_from_json(nlohmann::json::parse(text));
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->c.api, Api::kKernel);
  const nlohmann::json back = case_file_to_json(*f);
  EXPECT_EQ(back["api"], "kernel");
  f->c.api = Api::kPython;
  EXPECT_FALSE(case_file_to_json(*f).contains("api"));  // the default is not written
}

TEST(CaseJson, WrittenTextIsReadable) {
  auto f = case_file_from_json(json::parse(kFullCase));
  ASSERT_TRUE(f.ok());
  const std::string text = case_file_text(*f);
  EXPECT_EQ(text.rfind("{\n  \"gscheck_case\": 1,\n  \"name\": \"gather/full\",", 0), 0u) << text;
  EXPECT_NE(text.find("\"params\": {\n      \"dtype\": \"bfloat16\",\n      \"shape\": [2,3],\n"
                      "      \"data\": [0.0,1.0,2.0,3.0,4.0,5.0]\n"),
            std::string::npos)
      << text;
}

// Each malformed file gives a parse error naming the field.
TEST(CaseJson, MalformedCasesNameTheField) {
  const std::string base =
      R"("gscheck_case":1,"name":"n","op":"gather_nd",)"
      R"("inputs":{"params":{"dtype":"float32","shape":[2,2],"data":[1,2,3,4]},)";
  const std::string ok_indices = R"("indices":{"dtype":"int32","shape":[1,2],"data":[0,1]}})";
  struct Bad {
    std::string text;
    std::string message;
  };
  const std::vector<Bad> bad = {
      {"[]", "expected a case object, got an array"},
      {R"({"name":"n","op":"gather","inputs":{}})", "gscheck_case: missing"},
      {R"({"gscheck_case":2,"name":"n","op":"gather","inputs":{}})",
       "gscheck_case: unsupported format version 2"},
      {R"({"gscheck_case":1,"op":"gather","inputs":{}})", "name: missing"},
      {R"({"gscheck_case":1,"name":3,"op":"gather","inputs":{}})",
       "name: expected a string, got a number"},
      {R"({"gscheck_case":1,"name":"n","op":"gahter","inputs":{}})", "op: unknown op \"gahter\""},
      {R"({"gscheck_case":1,"name":"n","op":"gather","semantics":"tf-tpu","inputs":{}})",
       "semantics: unknown semantics \"tf-tpu\""},
      {R"({"gscheck_case":1,"name":"n","op":"gather","api":"raw","inputs":{}})",
       "api: unknown API level \"raw\" (expected python or kernel)"},
      {"{" + base + ok_indices.substr(0, ok_indices.size() - 1) +
           R"(},"api":"kernel","attrs":{"batch_dims":1}})",
       "the GatherNd kernel has no attribute 'batch_dims'"},
      {R"({"gscheck_case":1,"name":"n","op":"gather","inputs":{},"extra":1})",
       "extra: unknown field"},
      {R"({"gscheck_case":1,"name":"n","op":"gather"})", "inputs: missing"},
      {R"({"gscheck_case":1,"name":"n","op":"gather","attrs":{"axis":1.5},"inputs":{}})",
       "attrs.axis: expected an integer, got a non-integer number"},
      {R"({"gscheck_case":1,"name":"n","op":"gather","attrs":{"batchdims":1},"inputs":{}})",
       "attrs.batchdims: unknown attribute"},
      {"{" + base + R"("indices":{"dtype":"int32","shape":[1,"x"],"data":[0,1]}}})",
       "inputs.indices.shape[1]: expected an integer, got the string \"x\""},
      {"{" + base + R"("indices":{"dtype":"int32","shape":[1,-2],"data":[0,1]}}})",
       "inputs.indices.shape[1]: dimension must be >= 0, got -2"},
      {"{" + base + R"("indices":{"dtype":"int33","shape":[1,2],"data":[0,1]}}})",
       "inputs.indices.dtype: unknown dtype \"int33\""},
      {"{" + base + R"("indices":{"shape":[1,2],"data":[0,1]}}})", "inputs.indices.dtype: missing"},
      {"{" + base + R"("indices":{"dtype":"int32","data":[0,1]}}})",
       "inputs.indices.shape: missing"},
      {"{" + base + R"("indices":{"dtype":"int32","shape":[1,2]}}})",
       "inputs.indices: missing data"},
      {"{" + base + R"("indices":{"dtype":"int32","shape":[1,2],"data":[0,1],"fill":0}}})",
       "inputs.indices: has both 'data' and 'fill'"},
      {"{" + base + R"("indices":{"dtype":"int32","shape":[1,2],"data":[0]}}})",
       "inputs.indices.data: has 1 elements, but shape [1,2] needs 2"},
      {"{" + base + R"("indices":{"dtype":"int32","shape":[1,2],"data":[0,2147483648]}}})",
       "inputs.indices.data[1]: 2147483648 is out of range for int32"},
      {"{" + base + R"("indices":{"dtype":"uint8","shape":[1,2],"data":[0,-1]}}})",
       "inputs.indices.data[1]: -1 is out of range for uint8"},
      {"{" + base + R"("indices":{"dtype":"int32","shape":[1,2],"data":[0,1.0]}}})",
       "inputs.indices.data[1]: expected an integer, got a non-integer number"},
      {"{" + base + R"("indices":{"dtype":"int32","shape":[1,2],"data_b64":"AAAA"}}})",
       "inputs.indices.data_b64: decodes to 3 bytes, but int32 [1,2] needs 8"},
      {"{" + base + R"("indices":{"dtype":"int32","shape":[1,2],"data_b64":"AA!A"}}})",
       "inputs.indices.data_b64: invalid base64"},
      {"{" + base + R"("indices":{"dtype":"int32","shape":[1,2],"data":[0,1],"stride":1}}})",
       "inputs.indices.stride: unknown field"},
      {"{" + base + R"("indices":{"dtype":"bool","shape":[1],"data_b64":"Ag=="}}})",
       "inputs.indices.data_b64: bool element 0 is byte 2, not 0 or 1"},
      {R"({"gscheck_case":1,"name":"n","op":"gather","inputs":{"params":{"dtype":"float32","shape":[2],"data":[1,"one"]},)" +
           ok_indices + "}",
       "inputs.params.data[1]: expected a number or \"nan\""},
      {R"({"gscheck_case":1,"name":"n","op":"gather","inputs":{"params":{"dtype":"complex64","shape":[1],"data":[1]},)" +
           ok_indices + "}",
       "inputs.params.data[0]: expected a [re, im] pair, got a number"},
      {R"({"gscheck_case":1,"name":"n","op":"gather","inputs":{"params":{"dtype":"complex64","shape":[1],"data":[[1,null]]},)" +
           ok_indices + "}",
       "inputs.params.data[0][1]: expected a number"},
      {R"({"gscheck_case":1,"name":"n","op":"gather","inputs":{"params":{"dtype":"bool","shape":[1],"data":[1]},)" +
           ok_indices + "}",
       "inputs.params.data[0]: expected true or false, got a number"},
      {R"({"gscheck_case":1,"name":"n","op":"gather","inputs":{"params":{"dtype":"bool","shape":[1],"iota":0},)" +
           ok_indices + "}",
       "inputs.params.iota: iota is not defined for bool"},
      {R"({"gscheck_case":1,"name":"n","op":"gather","inputs":{)" + ok_indices + "}",
       "gather needs input 'params'"},
      {"{" + base + ok_indices.substr(0, ok_indices.size() - 1) +
           R"(,"updates":{"dtype":"int32","shape":[1],"data":[0]}}})",
       "gather_nd takes no input 'updates'"},
      {"{" + base + ok_indices.substr(0, ok_indices.size() - 1) +
           R"(,"update":{"dtype":"int32","shape":[1],"data":[0]}}})",
       "inputs.update: unknown input"},
      {"{" + base + ok_indices + R"(,"expect":{}})",
       "expect: give exactly one of 'output' and 'error'"},
      {"{" + base + ok_indices + R"(,"expect":{"error":{"class":"oops"}}})",
       "expect.error.class: unknown error class \"oops\""},
      {"{" + base + ok_indices + R"(,"expect":{"error":{"class":"bad_index","message":"(["}}})",
       "expect.error.message: invalid regular expression"},
      {"{" + base + ok_indices +
           R"(,"expect":{"output":{"dtype":"float32","shape":[1],"data":[]}}})",
       "expect.output.data: has 0 elements, but shape [1] needs 1"},
  };
  for (const Bad& b : bad) {
    json j = json::parse(b.text, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(j.is_discarded()) << b.text;
    auto f = case_file_from_json(j);
    ASSERT_FALSE(f.ok()) << b.text;
    EXPECT_EQ(f.error().cls, ErrorClass::kParse) << b.text;
    EXPECT_NE(f.error().message.find(b.message), std::string::npos)
        << "want: " << b.message << "\ngot:  " << f.error().message;
  }
  // The well-formed version of the same case loads.
  auto good = case_file_from_json(json::parse("{" + base + ok_indices + "}"));
  EXPECT_TRUE(good.ok()) << good.error().message;
}

TEST(CaseJson, LoadNamesTheFileAndTheJsonPosition) {
  TempDir dir;
  const std::string path = dir.file("bad.json", "{\n  \"gscheck_case\": 1,\n  \"name\": }\n");
  auto f = load_case_file(path);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().cls, ErrorClass::kParse);
  EXPECT_EQ(f.error().message.rfind(path + ": invalid JSON: ", 0), 0u) << f.error().message;
  EXPECT_NE(f.error().message.find("line 3"), std::string::npos) << f.error().message;
  const std::string path2 = dir.file("bad2.json", R"({"gscheck_case":1,"op":"gather"})");
  auto g = load_case_file(path2);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().message, path2 + ": name: missing");
  auto missing = load_case_file((dir.path() / "nope.json").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().cls, ErrorClass::kParse);
}

TEST(CaseJson, ListCaseFilesRecursesAndSorts) {
  TempDir dir;
  const std::string b = dir.file("sub/b.json", "{}");
  const std::string a = dir.file("a.json", "{}");
  const std::string deep = dir.file("sub/deeper/c.json", "{}");
  dir.file("sub/notes.txt", "x");
  dir.file("case.schema.json", "{}");
  const std::string txt = dir.file("explicit.txt", "{}");
  auto files = list_case_files({dir.path().string(), txt, a});
  ASSERT_TRUE(files.ok()) << files.error().message;
  std::vector<std::string> want = {a, txt, b, deep};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(*files, want);
  auto missing = list_case_files({(dir.path() / "absent").string()});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("no such file or directory"), std::string::npos);
}

TEST(CaseJson, Base64) {
  EXPECT_EQ(base64_encode("", 0), "");
  EXPECT_EQ(base64_encode("f", 1), "Zg==");
  EXPECT_EQ(base64_encode("fo", 2), "Zm8=");
  EXPECT_EQ(base64_encode("foobar", 6), "Zm9vYmFy");
  EXPECT_EQ(base64_decode("Zm9vYmE="), "fooba");
  EXPECT_EQ(base64_decode("Zg=="), "f");
  EXPECT_FALSE(base64_decode("Zg="));
  EXPECT_FALSE(base64_decode("Z==="));
  EXPECT_FALSE(base64_decode("Zg==Zg=="));
  EXPECT_FALSE(base64_decode("Zm9v YmFy"));
}

// Every case file in corpus/ (golden, regressions, seeds) parses.
TEST(CaseJson, CorpusLoads) {
  const std::string corpus = std::string(GSCHECK_SOURCE_DIR) + "/corpus";
  auto files = list_case_files({corpus});
  ASSERT_TRUE(files.ok()) << files.error().message;
  for (const auto& f : *files) {
    auto c = load_case_file(f);
    EXPECT_TRUE(c.ok()) << c.error().message;
  }
  std::cout << "loaded " << files->size() << " case files from " << corpus << "\n";
}

}  // namespace
}  // namespace gscheck
