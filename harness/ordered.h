// The ordered parallel loop behind --jobs: results are emitted in case order, so a report is the
// same whatever the number of workers.
#pragma once

#include <cstddef>
#include <functional>

namespace gscheck::harness {

/// Calls work(i) for i in [0, n) on `jobs` threads and emit(result) in index order, as soon as
/// each result and all before it are ready. jobs <= 1 runs everything on this thread.
template <class R>
void for_each_ordered(std::size_t n, int jobs, const std::function<R(std::size_t)>& work,
                      const std::function<void(R&&)>& emit);

}  // namespace gscheck::harness

#include "harness/ordered_impl.h"
