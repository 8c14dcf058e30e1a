#pragma once
// A small persistent thread pool: created on first use, reused by every kernel. A call to
// parallel_for allocates nothing (the callable is passed by reference, not in a std::function).
//
//   parallel_for(chunk_count(n), [&](std::size_t chunk) { ... });   // blocks until all done
//
// The calling thread works too; indices are handed out dynamically, so which thread runs which
// index varies, and the caller waits only for the workers that took part (one that wakes late
// finds the job done and leaves it). Anything order-dependent must be combined by index afterwards (see
// chunking.h). Thread count: set_num_threads(n), else env APEXNPU_NUM_THREADS (read on first use), else
// std::thread::hardware_concurrency(). A parallel_for called from inside a parallel_for body
// runs inline on the calling worker. Calls from different threads are serialised. The first
// exception thrown by the body is rethrown to the caller after the remaining indices are
// abandoned.
#include <cstddef>
#include <type_traits>
#include <utility>

namespace apexnpu::rt {

// Number of threads (the caller included) a parallel_for uses.
std::size_t num_threads();
// Sets the thread count (>= 1; ArgumentError otherwise). Restarts the workers; not to be called
// from inside a parallel_for body.
void set_num_threads(std::size_t count);

// The thread count for a value of APEXNPU_NUM_THREADS (null or empty: hardware concurrency);
// throws Error naming the variable unless it is an integer from 1 to 1024.
std::size_t thread_count_from_env(const char* value);

namespace detail {
using ChunkFn = void (*)(void* context, std::size_t index);
void parallel_for_impl(std::size_t count, ChunkFn fn, void* context);
}  // namespace detail

// Runs fn(i) for every i in [0, count), spread over the pool; returns when all are done.
template <typename Fn>
void parallel_for(std::size_t count, Fn&& fn) {
  using F = std::remove_reference_t<Fn>;
  detail::parallel_for_impl(
      count, [](void* context, std::size_t i) { (*static_cast<F*>(context))(i); },
      const_cast<void*>(static_cast<const void*>(&fn)));
}

// Sets the thread count for a scope and restores the previous one (tests, benchmarks).
class ScopedNumThreads {
 public:
  explicit ScopedNumThreads(std::size_t count) : previous_(num_threads()) { set_num_threads(count); }
  ~ScopedNumThreads() { set_num_threads(previous_); }
  ScopedNumThreads(const ScopedNumThreads&) = delete;
  ScopedNumThreads& operator=(const ScopedNumThreads&) = delete;

 private:
  std::size_t previous_;
};

}  // namespace apexnpu::rt
