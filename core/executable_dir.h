// Where the running program lies: gscheck finds its worker, the Python host plugin and its
// installed data beside its own executable, in the build tree and after `cmake --install` alike.
#pragma once

#include <string>

namespace gscheck {

/// The directory of the running executable (/proc/self/exe, symlinks resolved), with a trailing
/// '/'; "" when it cannot be read.
std::string executable_dir();

}  // namespace gscheck
