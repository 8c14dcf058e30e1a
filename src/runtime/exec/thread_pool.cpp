#include "exec/thread_pool.h"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "exec/error.h"

namespace apexnpu::rt {
namespace {

constexpr std::size_t kMaxThreads = 1024;

thread_local bool t_inside_pool_job = false;

std::size_t default_thread_count() { return thread_count_from_env(std::getenv("APEXNPU_NUM_THREADS")); }

class ThreadPool {
 public:
  explicit ThreadPool(std::size_t threads) { start(threads); }
  ~ThreadPool() { stop(); }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  std::size_t size() const noexcept { return workers_.size() + 1; }

  void resize(std::size_t threads) {
    std::lock_guard submit(submit_mutex_);
    if (threads == size()) return;
    stop();
    start(threads);
  }

  void run(std::size_t count, detail::ChunkFn fn, void* context) {
    if (count == 0) return;
    if (t_inside_pool_job || count == 1 || workers_.empty()) {
      run_inline(count, fn, context);
      return;
    }
    std::lock_guard submit(submit_mutex_);
    if (workers_.empty()) {  // resized to 1 while we waited
      run_inline(count, fn, context);
      return;
    }
    {
      std::lock_guard lock(mutex_);
      fn_ = fn;
      context_ = context;
      count_ = count;
      next_.store(0, std::memory_order_relaxed);
      open_ = true;
      joined_ = 0;
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    t_inside_pool_job = true;
    work();
    t_inside_pool_job = false;
    // Close the job and wait only for the workers that joined it: a worker still asleep (on a
    // loaded machine the scheduler may not run it for milliseconds) has nothing left to do, and
    // finds the job closed when it wakes.
    std::unique_lock lock(mutex_);
    open_ = false;
    done_.wait(lock, [&] { return joined_ == 0; });
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  static void run_inline(std::size_t count, detail::ChunkFn fn, void* context) {
    for (std::size_t i = 0; i < count; ++i) fn(context, i);
  }

  // Takes indices until none are left; records the first exception and abandons the rest.
  void work() noexcept {
    for (;;) {
      const std::size_t i = next_.fetch_add(1, std::memory_order_relaxed);
      if (i >= count_) return;
      try {
        fn_(context_, i);
      } catch (...) {
        std::lock_guard lock(mutex_);
        if (!error_) error_ = std::current_exception();
        next_.store(count_, std::memory_order_relaxed);
      }
    }
  }

  // `seen` starts at the generation current when the worker was started: a worker started by
  // resize() must not take the last finished job for a new one (it would count itself done
  // twice, and the next caller could wait forever or return while workers still run).
  void worker_loop(std::uint64_t seen) {
    t_inside_pool_job = true;
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
        if (!open_) continue;  // finished by the others before this worker woke
        ++joined_;
      }
      work();
      std::lock_guard lock(mutex_);
      if (--joined_ == 0) done_.notify_one();
    }
  }

  void start(std::size_t threads) {
    stopping_ = false;
    workers_.reserve(threads - 1);
    // No job is in flight here (constructor, or resize() holding submit_mutex_).
    const std::uint64_t current = generation_;
    for (std::size_t i = 1; i < threads; ++i)
      workers_.emplace_back([this, current] { worker_loop(current); });
  }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
    workers_.clear();
  }

  std::mutex submit_mutex_;  // one job at a time
  std::mutex mutex_;         // guards the job description and the counters below
  std::condition_variable wake_;
  std::condition_variable done_;
  std::vector<std::thread> workers_;
  std::uint64_t generation_ = 0;
  bool stopping_ = false;
  detail::ChunkFn fn_ = nullptr;
  void* context_ = nullptr;
  std::size_t count_ = 0;
  std::atomic<std::size_t> next_{0};
  bool open_ = false;       // the current job still takes workers
  std::size_t joined_ = 0;  // workers in the current job, not yet done with it
  std::exception_ptr error_;
};

ThreadPool& pool() {
  static ThreadPool instance(default_thread_count());
  return instance;
}

}  // namespace

std::size_t thread_count_from_env(const char* env) {
  if (env != nullptr && *env != '\0') {
    char* end = nullptr;
    const long long value = std::strtoll(env, &end, 10);
    if (*end != '\0' || value < 1 || value > static_cast<long long>(kMaxThreads))
      throw Error(concat("environment variable APEXNPU_NUM_THREADS='", env,
                         "' is not a thread count between 1 and ", kMaxThreads));
    return static_cast<std::size_t>(value);
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : hw;
}

std::size_t num_threads() { return pool().size(); }

void set_num_threads(std::size_t count) {
  if (count < 1 || count > kMaxThreads)
    throw ArgumentError(concat("thread count must be between 1 and ", kMaxThreads, ", got ", count));
  if (t_inside_pool_job) throw Error("set_num_threads called from inside a parallel_for body");
  pool().resize(count);
}

namespace detail {
void parallel_for_impl(std::size_t count, ChunkFn fn, void* context) { pool().run(count, fn, context); }
}  // namespace detail

}  // namespace apexnpu::rt
