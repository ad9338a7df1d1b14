// for_each_ordered (harness/ordered.h).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

namespace gscheck::harness {

template <class R>
void for_each_ordered(std::size_t n, int jobs, const std::function<R(std::size_t)>& work,
                      const std::function<void(R&&)>& emit) {
  if (jobs <= 1 || n <= 1) {
    for (std::size_t i = 0; i < n; ++i) emit(work(i));
    return;
  }
  std::vector<std::optional<R>> done(n);
  std::mutex mu;
  std::condition_variable ready;
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> threads;
  const auto count = static_cast<std::size_t>(jobs) < n ? static_cast<std::size_t>(jobs) : n;
  auto serve = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < n;) {
      R r = work(i);
      {
        std::lock_guard lock(mu);
        done[i] = std::move(r);
      }
      ready.notify_one();
    }
  };
  for (std::size_t t = 0; t < count; ++t) {
    try {
      threads.emplace_back(serve);
    } catch (const std::system_error& e) {
      // A pids or thread limit: go on with the threads there are (none: this thread works).
      std::fprintf(stderr,
                   "gscheck: could not start worker thread %zu of %zu (%s); going on with %zu\n",
                   t + 1, count, e.what(), t);
      break;
    }
  }
  if (threads.empty()) {
    for (std::size_t i = 0; i < n; ++i) emit(work(i));
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    std::unique_lock lock(mu);
    ready.wait(lock, [&] { return done[i].has_value(); });
    R r = std::move(*done[i]);
    done[i].reset();
    lock.unlock();
    emit(std::move(r));
  }
  for (auto& t : threads) t.join();
}

}  // namespace gscheck::harness
