#include "core/job_pool.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

namespace apexnpu::core {

std::size_t thread_count(WorkKind kind, int requested) {
  if (requested > 0) return static_cast<std::size_t>(requested);
  const std::size_t hardware = std::max(1u, std::thread::hardware_concurrency());
  switch (kind) {
    case WorkKind::io:
      return std::min<std::size_t>(hardware, 4);
    case WorkKind::compile:
      return hardware;
  }
  return 1;
}

void PoolOutcome::rethrow_first() const {
  if (!failures.empty()) std::rethrow_exception(failures.front().error);
}

namespace {

std::string what_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

}  // namespace

PoolOutcome run_pool(std::size_t count, std::size_t threads, const Job& job, const PoolOptions& options) {
  PoolOutcome outcome;
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> first_failed{count};  // the lowest job number that failed so far
  std::mutex mutex;
  auto worker = [&](std::size_t w) {
    for (;;) {
      const std::size_t k = next.fetch_add(1);
      if (k >= count) return;
      const std::size_t i = options.order.size() == count ? options.order[k] : k;
      if (i > first_failed.load()) continue;  // a job before it failed: its outcome cannot count
      try {
        job(i, w);
        const std::lock_guard lock(mutex);
        ++outcome.completed;
        if (options.on_done) options.on_done(outcome.completed, count);
      } catch (...) {
        std::exception_ptr error = std::current_exception();
        std::string what = what_of(error);
        const std::lock_guard lock(mutex);
        outcome.failures.push_back({i, std::move(error), std::move(what)});
        if (i < first_failed.load()) first_failed = i;
      }
    }
  };
  const std::size_t n = std::clamp<std::size_t>(threads, 1, std::max<std::size_t>(count, 1));
  {
    std::vector<std::jthread> helpers;
    helpers.reserve(n - 1);
    for (std::size_t t = 1; t < n; ++t) helpers.emplace_back(worker, t);
    worker(0);
  }
  std::sort(outcome.failures.begin(), outcome.failures.end(),
            [](const JobFailure& a, const JobFailure& b) { return a.job < b.job; });
  return outcome;
}

void run_jobs(std::size_t count, std::size_t threads, const Job& job, const PoolOptions& options) {
  run_pool(count, threads, job, options).rethrow_first();
}

void run_side_by_side(const std::vector<std::function<void()>>& work) {
  run_jobs(work.size(), work.size(), [&](std::size_t i, std::size_t) { work[i](); });
}

}  // namespace apexnpu::core
