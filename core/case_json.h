// Case files: JSON <-> CaseFile, as described in docs/case_format.md (schema:
// corpus/case.schema.json). Every malformed input is a kParse error naming the field path.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/case.h"
#include "core/status.h"
#include "core/tensor.h"

namespace gscheck {

/// The case file format version this build reads and writes.
inline constexpr int kCaseFormatVersion = 1;

/// How tensor data is written.
enum class TensorEncoding : unsigned char {
  /// Readable JSON values; a tensor whose values would lose bits as numbers (a NaN with a
  /// payload, a string that is not UTF-8) is written in base64 instead.
  kNumbers,
  /// Raw little-endian bytes in base64 for every tensor (strings: one base64 text per element).
  kBase64,
};

/// Parse a tensor object ({"dtype", "shape", and one of data / data_b64 / fill / iota}).
/// path names the object in error messages ("inputs.params"). A tensor larger than max_bytes is
/// refused with kResourceExhausted before anything is allocated.
Expected<Tensor> tensor_from_json(const nlohmann::json& j, const std::string& path,
                                  int64_t max_bytes = kDefaultMaxCaseBytes);
/// Write a tensor object with data (or data_b64, see TensorEncoding).
nlohmann::json tensor_to_json(const Tensor& t, TensorEncoding encoding = TensorEncoding::kNumbers);

/// Parse a whole case file object. All tensors together may not exceed max_bytes.
Expected<CaseFile> case_file_from_json(const nlohmann::json& j,
                                       int64_t max_bytes = kDefaultMaxCaseBytes);
/// Write a case file object (only the attributes that differ from their defaults).
nlohmann::json case_file_to_json(const CaseFile& f,
                                 TensorEncoding encoding = TensorEncoding::kNumbers);

/// Parse JSON text into a DOM without recursion: nesting deeper than 64 levels is a kParse error,
/// a DOM estimated over max_dom_bytes is kResourceExhausted; error text quotes only excerpts.
Expected<nlohmann::json> parse_json_bounded(std::string_view text, int64_t max_dom_bytes);
/// The whole of a regular file of at most max_bytes (a FIFO, device or directory is a kParse
/// error, a larger file kResourceExhausted before anything is read).
Expected<std::string> read_bounded(const std::string& path, int64_t max_bytes);
/// Parse case file text: the DOM may use 3x max_bytes (at least 192 KiB), the tensors max_bytes;
/// std::bad_alloc becomes kResourceExhausted.
Expected<CaseFile> parse_case_file_text(std::string_view text,
                                        int64_t max_bytes = kDefaultMaxCaseBytes);
/// Read and parse a case file; errors are prefixed with the file's path. The size is taken from
/// the open file (fstat) and refused over max_bytes (kResourceExhausted) before anything is read;
/// otherwise as parse_case_file_text.
Expected<CaseFile> load_case_file(const std::string& path,
                                  int64_t max_bytes = kDefaultMaxCaseBytes);
/// The text save_case_file writes: indented objects, each data array on one line.
std::string case_file_text(const CaseFile& f, TensorEncoding encoding = TensorEncoding::kNumbers);
/// Write a case file (kInternal when the file cannot be written).
Status save_case_file(const std::string& path, const CaseFile& f,
                      TensorEncoding encoding = TensorEncoding::kNumbers);

/// Expand files and directories into case files: a named file is taken as is; a directory is
/// searched recursively for *.json, skipping JSON Schemas (*.schema.json). Sorted, no duplicates.
/// A path that does not exist is a kParse error.
Expected<std::vector<std::string>> list_case_files(const std::vector<std::string>& paths);

/// Base64 (RFC 4648, with padding), used by data_b64.
std::string base64_encode(const void* data, std::size_t size);
/// Strict decode: padding required, no whitespace; nullopt on any invalid character or length.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace gscheck
