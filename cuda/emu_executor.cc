#include "cuda/emu_executor.h"

namespace gscheck::cuda {

BlockPool::BlockPool(int threads) {
  int n = threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency());
  if (n < 1) n = 1;
  for (int i = 1; i < n; ++i) workers_.emplace_back([this] { worker_loop(); });
}

BlockPool::~BlockPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

// Take blocks until none is left; each block runs outside the lock.
void BlockPool::drain() {
  std::unique_lock<std::mutex> lock(mu_);
  while (body_ && next_ < blocks_) {
    const uint32_t b = next_++;
    const auto* body = body_;
    lock.unlock();
    (*body)(b);
    lock.lock();
    if (++finished_ == blocks_) done_.notify_all();
  }
}

void BlockPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    drain();
  }
}

void BlockPool::run(uint32_t blocks, const std::function<void(uint32_t)>& body) {
  if (blocks == 0) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    body_ = &body;
    blocks_ = blocks;
    next_ = 0;
    finished_ = 0;
    ++generation_;
  }
  wake_.notify_all();
  drain();
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return finished_ == blocks_; });
  body_ = nullptr;
}

}  // namespace gscheck::cuda
