#include "harness/sealed_inputs.h"

#include "core/case_json.h"
#include "core/sha256.h"

namespace gscheck::harness {

SealedInputs SealedInputs::read(const std::vector<std::string>& files, int64_t max_bytes) {
  SealedInputs s;
  for (const std::string& path : files) {
    File f;
    f.text = read_bounded(path, max_bytes);
    if (f.text.ok()) {
      f.sha256 = sha256_hex(*f.text);
      s.bytes_ += static_cast<int64_t>(f.text->size());
    } else {
      f.text = Error{f.text.error().cls, path + ": " + f.text.error().message};
    }
    s.files_.insert_or_assign(path, std::move(f));
  }
  return s;
}

const SealedInputs::File* SealedInputs::find(const std::string& path) const {
  auto it = files_.find(path);
  return it == files_.end() ? nullptr : &it->second;
}

std::string SealedInputs::digest() const {
  std::string list;
  for (const auto& [path, f] : files_)
    list += (f.sha256.empty() ? "-" : f.sha256) + "  " + path + "\n";
  return sha256_hex(list);
}

}  // namespace gscheck::harness
