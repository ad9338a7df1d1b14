// The wire protocol's decoders (fuzz/wire_check.h) on well-formed frames gscheck itself makes,
// on every seed CI keeps (corpus/fuzz/wire_*), and on seeded random corruptions of both: no
// crash, no read outside the memory given, no output beyond the budget, and corruptions that
// must be refused are.
#include "backends/plugin/wire.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "backends/plugin/host_codec.h"
#include "backends/plugin/host_text.h"
#include "backends/plugin/worker_output_arena.h"
#include "core/case_json.h"
#include "fuzz/wire_check.h"

namespace gscheck {
namespace {

namespace w = worker;
namespace fs = std::filesystem;

std::string read_all(int fd) {
  std::string s;
  char buf[4096];
  ::lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
    s.append(buf, static_cast<std::size_t>(n));
  return s;
}

// "in" as gscheck lays it out for a golden case.
std::string call_bytes(const std::string& golden) {
  auto f = load_case_file(std::string(GSCHECK_SOURCE_DIR) + "/corpus/golden/" + golden);
  if (!f.ok()) ADD_FAILURE() << golden << ": " << f.error().message;
  int fd = -1;
  uint64_t total = 0;
  EXPECT_EQ(plugin::write_inputs(f->c, 1 << 20, fd, total), "");
  std::string s = read_all(fd);
  ::close(fd);
  s.resize(total);
  return s;
}

// A well-formed fuzz input for run_wire_result: an int32 [2,3] output laid out as the worker
// lays it, its guard bytes in place.
std::string result_bytes() {
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const w::OutputLayout l = w::output_layout(24, page);
  std::string out(l.map_bytes, '\0');
  std::memset(out.data() + l.region_offset, kGuardByte, l.region_bytes);
  for (int i = 0; i < 6; ++i) std::memcpy(out.data() + l.payload_offset + 4 * i, &i, 4);
  w::WireResult r{};
  r.has_output = 1;
  r.dtype = 3;  // int32
  r.rank = 2;
  r.payload_offset = l.payload_offset;
  r.payload_bytes = 24;
  const int64_t dims[2] = {2, 3};
  std::string payload(reinterpret_cast<const char*>(&r), sizeof r);
  payload.append(reinterpret_cast<const char*>(dims), sizeof dims);
  const uint32_t budget = 1000;
  const auto n = static_cast<uint16_t>(payload.size());
  std::string in(reinterpret_cast<const char*>(&budget), 4);
  in.append(reinterpret_cast<const char*>(&n), 2);
  return in + payload + out;
}

void mutate(std::string& s, std::mt19937_64& rng) {
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !s.empty(); ++e) {
    const std::size_t at = rng() % s.size();
    switch (rng() % 3) {
      case 0:
        s[at] = static_cast<char>(s[at] ^ (1 << (rng() % 8)));
        break;
      case 1:
        s[at] = static_cast<char>(rng());
        break;
      default:
        s.resize(at);  // truncated
    }
  }
}

TEST(WireCall, GscheckLayoutsAreAccepted) {
  for (const char* g :
       {"gather/tf_string_axis0.json", "tensor_scatter_nd/add_duplicates_float32_row_order.json",
        "gather/axis_int64_tensor.json"}) {
    const std::string in = call_bytes(g);
    EXPECT_EQ(w::check_call(reinterpret_cast<const unsigned char*>(in.data()), in.size()), nullptr)
        << g;
  }
}

TEST(WireCall, OutOfBoundsTensorsAreRefused) {
  std::string in = call_bytes("gather/axis_int64_tensor.json");
  w::WireCall wc;
  std::memcpy(&wc, in.data(), sizeof wc);
  wc.inputs[0].data_bytes = in.size();  // runs past the end of "in"
  std::memcpy(in.data(), &wc, sizeof wc);
  EXPECT_NE(w::check_call(reinterpret_cast<const unsigned char*>(in.data()), in.size()), nullptr);
  EXPECT_NE(w::check_call(reinterpret_cast<const unsigned char*>(in.data()), 8), nullptr);
}

TEST(WireResult, AWellFormedResultDecodes) {
  const std::string in = result_bytes();
  // The same bytes through read_result directly: accepted, values as laid out.
  const auto* d = reinterpret_cast<const uint8_t*>(in.data());
  EXPECT_EQ(fuzz::run_wire_result(d, in.size()), 0);
}

TEST(WireResult, AClaimBeyondTheBudgetIsRefusedBeforeAllocating) {
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const int fd = ::memfd_create("wire-test", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 1 << 20), 0);
  w::WireResult r{};
  r.has_output = 1;
  r.dtype = 3;
  r.rank = 1;
  r.payload_bytes = uint64_t{4} << 40;  // 4 TiB, as a forged frame may claim
  r.payload_offset = w::output_layout(r.payload_bytes, page).payload_offset;
  const int64_t dims[1] = {int64_t{1} << 40};
  std::string payload(reinterpret_cast<const char*>(&r), sizeof r);
  payload.append(reinterpret_cast<const char*>(dims), sizeof dims);
  plugin::LogTail log;
  const plugin::Decoded d = plugin::read_result(payload, "", fd, 1000000, log);
  ::close(fd);
  ASSERT_FALSE(d.outcome.ok());
  EXPECT_TRUE(d.restart);
  EXPECT_NE(d.outcome.error().message.find("exceeds the byte budget"), std::string::npos)
      << d.outcome.error().message;
}

TEST(WireResult, AWrittenGuardPageIsSeen) {
  std::string in = result_bytes();
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const w::OutputLayout l = w::output_layout(24, page);
  const std::size_t out_at = in.size() - l.map_bytes;
  in[out_at + l.map_bytes - 1] = 1;  // the last byte of the tail guard page
  const auto n = in.size();
  // Decode directly to read the message.
  uint16_t payload_size = 0;
  std::memcpy(&payload_size, in.data() + 4, 2);
  const std::string payload = in.substr(6, payload_size);
  const int fd = ::memfd_create("wire-test", MFD_CLOEXEC);
  ASSERT_EQ(::write(fd, in.data() + out_at, n - out_at), static_cast<ssize_t>(n - out_at));
  plugin::LogTail log;
  const plugin::Decoded d = plugin::read_result(payload, "", fd, 1000, log);
  ::close(fd);
  ASSERT_FALSE(d.outcome.ok());
  EXPECT_NE(d.outcome.error().message.find("in the guard page"), std::string::npos)
      << d.outcome.error().message;
}

// Every byte of the output's mapping outside the payload, changed alone, is seen and named by
// its distance from the payload: the guard page before, each guard byte before and after, the
// guard page after. (The worker checks the guard bytes too; this is gscheck's own check, which
// holds when the worker lies.)
TEST(WireResult, EveryChangedGuardByteIsNamed) {
  const std::string in = result_bytes();
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const w::OutputLayout l = w::output_layout(24, page);
  const std::size_t out_at = in.size() - l.map_bytes;
  uint16_t payload_size = 0;
  std::memcpy(&payload_size, in.data() + 4, 2);
  const std::string payload = in.substr(6, payload_size);
  const int fd = ::memfd_create("wire-test", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  const std::string clean = in.substr(out_at);
  auto decode = [&](uint64_t at) {
    std::string out = clean;
    out[at] = static_cast<char>(out[at] ^ 0x5a);
    EXPECT_EQ(::pwrite(fd, out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
    plugin::LogTail log;
    return plugin::read_result(payload, "", fd, 1000, log);
  };
  int checked = 0;
  for (uint64_t at = 0; at < l.map_bytes; ++at) {
    if (at >= l.payload_offset && at < l.payload_offset + 24) continue;
    const plugin::Decoded d = decode(at);
    ASSERT_FALSE(d.outcome.ok()) << "byte " << at << " of the mapping changed unseen";
    const std::string& m = d.outcome.error().message;
    std::string want;
    if (at < page) {
      want = "guard page before its output buffer (byte " + std::to_string(page - at) + " before";
    } else if (at < l.payload_offset) {
      want = "before its output buffer (guard byte " + std::to_string(l.payload_offset - at) +
             " before the start)";
    } else if (at < l.payload_offset + 24 + l.tail_bytes) {
      want = "past the end of its output buffer (guard byte " +
             std::to_string(at - l.payload_offset - 24) + " after the end)";
    } else {
      want = "(byte " + std::to_string(at - l.payload_offset - 24) + " after the end, in the guard";
    }
    ASSERT_NE(m.find(want), std::string::npos) << "byte " << at << ": " << m;
    ++checked;
  }
  ::close(fd);
  EXPECT_EQ(checked, static_cast<int>(l.map_bytes) - 24);
  // The unchanged mapping still decodes (the loop's failures are the changed byte's doing).
  EXPECT_EQ(fuzz::run_wire_result(reinterpret_cast<const uint8_t*>(in.data()), in.size()), 0);
}

// A string output: the entries table, then the bytes, after the guarded payload region. Each
// entry must point at the bytes after the table (docs: wire.h): one that points into the table
// itself or anywhere before it would hand gscheck its own bookkeeping or the output region as
// string text.
TEST(WireResult, StringEntriesPointOnlyAtTheStringBytes) {
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t count = 2, table = count * w::kStringEntryBytes;
  const w::OutputLayout l = w::output_layout(table, page);
  const uint64_t strings_at = l.map_bytes, bytes_at = strings_at + table;
  w::WireResult r{};
  r.has_output = 1;
  r.dtype = static_cast<decltype(r.dtype)>(DType::kString);
  r.rank = 1;
  r.strings_offset = strings_at;
  r.strings_bytes = table + 7;  // "hello", "ab"
  const int64_t dims[1] = {2};
  std::string payload(reinterpret_cast<const char*>(&r), sizeof r);
  payload.append(reinterpret_cast<const char*>(dims), sizeof dims);
  const int fd = ::memfd_create("wire-test", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  auto decode = [&](uint64_t first_at) {
    std::string out(l.map_bytes + table + 7, '\0');
    std::memset(out.data() + l.region_offset, kGuardByte, l.region_bytes);
    const uint64_t e[4] = {first_at, 5, bytes_at + 5, 2};
    std::memcpy(out.data() + strings_at, e, sizeof e);
    std::memcpy(out.data() + bytes_at, "helloab", 7);
    EXPECT_EQ(::pwrite(fd, out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
    plugin::LogTail log;
    return plugin::read_result(payload, "", fd, 1000, log);
  };
  const plugin::Decoded good = decode(bytes_at);
  ASSERT_TRUE(good.outcome.ok()) << good.outcome.error().message;
  EXPECT_EQ(good.outcome->strings()[0], "hello");
  EXPECT_EQ(good.outcome->strings()[1], "ab");
  for (const uint64_t at :
       {strings_at, strings_at + 8, bytes_at - 1, l.payload_offset, uint64_t{0}}) {
    const plugin::Decoded d = decode(at);
    ASSERT_FALSE(d.outcome.ok()) << "an entry at " << at << " (string bytes start at " << bytes_at
                                 << ") was accepted";
    EXPECT_NE(d.outcome.error().message.find("malformed string output"), std::string::npos)
        << d.outcome.error().message;
  }
  ::close(fd);
}

// A plugin's text goes into JSON reports and onto terminals: control bytes and every byte that is
// not part of well-formed UTF-8 are escaped, well-formed UTF-8 is kept.
TEST(Sanitize, EscapesControlBytesAndWhatIsNotUtf8) {
  EXPECT_EQ(plugin::sanitize("a\nb\x1b[2J"), "a\\x0ab\\x1b[2J");
  EXPECT_EQ(plugin::sanitize("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(plugin::sanitize("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(plugin::sanitize("\xc0\x80"), "\\xc0\\x80");                    // overlong NUL
  EXPECT_EQ(plugin::sanitize("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(plugin::sanitize("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(plugin::sanitize("x\xc3"), "x\\xc3");                           // cut at the end
  EXPECT_EQ(plugin::sanitize("\xe2\x82x"), "\\xe2\\x82x");                  // cut in the middle
}

// A chatty worker's failure shows its last lines, in order, not the first it wrote.
TEST(LogTail, KeepsTheNewestLines) {
  plugin::LogTail log;
  for (int i = 0; i < 5000; ++i) {
    const std::string line = "line " + std::to_string(i) + "\n";
    log.add(line.data(), line.size());
  }
  EXPECT_EQ(log.tail(3), "; worker stderr (last 3 lines): line 4997 | line 4998 | line 4999");
  // A line longer than is kept shows its end.
  plugin::LogTail one;
  const std::string longest = std::string(20000, 'a') + "the end\n";
  one.add(longest.data(), longest.size());
  const std::string t = one.tail();
  EXPECT_EQ(t.substr(t.size() - 7), "the end") << t;
  EXPECT_EQ(plugin::LogTail().tail(), "");
}

// A sanitizer's report in a plugin ends in stack frames; its headline, above the tail, is kept.
TEST(LogTail, KeepsASanitizerHeadlineAboveTheTail) {
  plugin::LogTail log;
  const std::string report =
      "starting\n"
      "plugin.c:88:23: runtime error: signed integer overflow: 9223372036854775807 * 2\n"
      "    #0 0x1 in run plugin.c:88\n    #1 0x2 in run_plugin worker_call.cc:130\n"
      "    #2 0x3 in main worker_main.cc:180\n";
  log.add(report.data(), report.size());
  EXPECT_EQ(log.tail(2),
            "; worker stderr (its sanitizer report's headline, then last 2 lines): plugin.c:88:23: "
            "runtime error: signed integer overflow: 9223372036854775807 * 2 | ... |     #1 0x2 in "
            "run_plugin worker_call.cc:130 |     #2 0x3 in main worker_main.cc:180");
  // Within the tail already: shown once, in its place.
  EXPECT_EQ(log.tail(4).find("headline"), std::string::npos) << log.tail(4);
}

TEST(Wire, SeedsAndRandomCorruptionsNeitherCrashNorOverread) {
  std::vector<std::pair<std::string, std::string>> seeds = {
      {"wire_call", call_bytes("gather/tf_string_axis0.json")},
      {"wire_call", call_bytes("tensor_scatter_nd/add_duplicates_float32_row_order.json")},
      {"wire_result", result_bytes()}};
  for (const char* t : {"wire_call", "wire_result"}) {
    const fs::path dir = fs::path(GSCHECK_SOURCE_DIR) / "corpus/fuzz" / t;
    if (!fs::exists(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      std::ifstream f(e.path(), std::ios::binary);
      seeds.emplace_back(t, std::string(std::istreambuf_iterator<char>(f), {}));
    }
  }
  // $GSCHECK_WRITE_WIRE_SEEDS=DIR writes the built-in seeds (how corpus/fuzz/wire_* began).
  if (const char* out = std::getenv("GSCHECK_WRITE_WIRE_SEEDS")) {
    for (std::size_t i = 0; i < 3; ++i) {
      fs::create_directories(fs::path(out) / seeds[i].first);
      std::ofstream(fs::path(out) / seeds[i].first / ("seed" + std::to_string(i)), std::ios::binary)
          << seeds[i].second;
    }
  }
  std::mt19937_64 rng(20261202);
  for (const auto& [target, bytes] : seeds) {
    for (int i = 0; i < 3000; ++i) {
      std::string s = bytes;
      if (i) mutate(s, rng);
      const auto* d = reinterpret_cast<const uint8_t*>(s.data());
      if (target == "wire_call") {
        EXPECT_EQ(fuzz::run_wire_call(d, s.size()), 0);
      } else {
        EXPECT_EQ(fuzz::run_wire_result(d, s.size()), 0);
      }
    }
  }
}

}  // namespace
}  // namespace gscheck

namespace gscheck {
namespace {

// set_string() charges each element's current bytes once against the call's budget (the
// output's payload and every string's bytes, docs/vendor.md "Strings"): setting an element
// again charges the difference, never its whole size again. Random set/reset sequences against
// that model.
TEST(SetString, ChargesEachElementsCurrentBytesOnce) {
  std::mt19937 rng(20261205);
  for (int round = 0; round < 50; ++round) {
    const int64_t count = 1 + static_cast<int64_t>(rng() % 6);
    worker::WorkerState state;
    worker::Output o(state);
    std::vector<gsc_string> payload(static_cast<std::size_t>(count));
    o.allocated = true;
    o.dtype = GSC_STRING;
    o.count = count;
    o.payload_bytes = sizeof(gsc_string) * static_cast<uint64_t>(count);
    o.max_bytes = static_cast<int64_t>(o.payload_bytes) + 40 + static_cast<int64_t>(rng() % 40);
    o.map = reinterpret_cast<unsigned char*>(payload.data());  // not owned: reserve stays null
    o.copies.resize(static_cast<std::size_t>(count));
    o.copied.assign(static_cast<std::size_t>(count), 0);
    std::vector<int64_t> sizes(static_cast<std::size_t>(count), 0);
    const std::string text(200, 'x');
    for (int step = 0; step < 40; ++step) {
      const int64_t i = static_cast<int64_t>(rng() % static_cast<unsigned>(count));
      const int64_t size = static_cast<int64_t>(rng() % 50);
      int64_t after = size;
      for (int64_t j = 0; j < count; ++j)
        if (j != i) after += sizes[static_cast<std::size_t>(j)];
      const bool fits = after <= o.max_bytes - static_cast<int64_t>(o.payload_bytes);
      const int32_t code = worker::set_string(&o, i, text.data(), size);
      ASSERT_EQ(code, fits ? GSC_OK : GSC_RESOURCE_EXHAUSTED)
          << "round " << round << " step " << step << ": element " << i << " to " << size
          << " bytes, " << after << " in all";
      if (fits) sizes[static_cast<std::size_t>(i)] = size;
      int64_t sum = 0;
      for (int64_t s : sizes) sum += s;
      ASSERT_EQ(o.string_bytes, sum);
      ASSERT_EQ(payload[static_cast<std::size_t>(i)].size, sizes[static_cast<std::size_t>(i)]);
    }
    EXPECT_EQ(worker::set_string(&o, count, text.data(), 1), GSC_INVALID_ARGUMENT);
    EXPECT_EQ(worker::set_string(&o, 0, nullptr, 1), GSC_INVALID_ARGUMENT);
    o.map = nullptr;
  }
}

}  // namespace
}  // namespace gscheck
