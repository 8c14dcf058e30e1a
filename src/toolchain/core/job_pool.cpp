#include "core/job_pool.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

namespace apexnpu::compile {

PoolOutcome run_pool(std::size_t count, int workers, const std::function<void(std::size_t)>& task,
                     const std::function<void(std::size_t, std::size_t)>& on_done,
                     const std::vector<std::size_t>& order) {
  PoolOutcome outcome;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  auto worker = [&] {
    for (;;) {
      if (failed.load()) return;
      const std::size_t k = next.fetch_add(1);
      if (k >= count) return;
      const std::size_t i = order.size() == count ? order[k] : k;
      try {
        task(i);
        std::lock_guard lock(mutex);
        ++outcome.completed;
        if (on_done) on_done(outcome.completed, count);
      } catch (const std::exception& e) {
        failed = true;
        std::lock_guard lock(mutex);
        outcome.failures.emplace_back(i, e.what());
      }
    }
  };
  const std::size_t n = std::clamp<std::size_t>(static_cast<std::size_t>(std::max(workers, 1)), 1,
                                                std::max<std::size_t>(count, 1));
  {
    std::vector<std::jthread> threads;
    for (std::size_t t = 1; t < n; ++t) threads.emplace_back(worker);
    worker();
  }
  std::sort(outcome.failures.begin(), outcome.failures.end());
  return outcome;
}

}  // namespace apexnpu::compile
