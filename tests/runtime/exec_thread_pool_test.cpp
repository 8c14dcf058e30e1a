#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "exec/chunking.h"
#include "exec/error.h"
#include "exec/thread_pool.h"

namespace apexnpu::rt {
namespace {

TEST(Chunking, FixedSizeAlignedChunksCoverTheBuffer) {
  EXPECT_EQ(chunk_count(0), 0u);
  EXPECT_EQ(chunk_count(1), 1u);
  EXPECT_EQ(chunk_count(kChunkElements), 1u);
  EXPECT_EQ(chunk_count(kChunkElements + 1), 2u);
  const std::size_t n = 3 * kChunkElements + 17;
  std::size_t covered = 0;
  for (std::size_t c = 0; c < chunk_count(n); ++c) {
    const ChunkRange r = chunk_range(c, n);
    EXPECT_EQ(r.begin, covered);
    EXPECT_EQ(r.begin % kChunkAlignment, 0u);
    covered = r.end;
  }
  EXPECT_EQ(covered, n);
}

TEST(ThreadPool, RunsEveryIndexOnceForAnyThreadCount) {
  for (const std::size_t threads : {1u, 2u, 3u, 5u}) {
    ScopedNumThreads scoped(threads);
    EXPECT_EQ(num_threads(), threads);
    for (const std::size_t count : {0u, 1u, 2u, 7u, 1000u}) {
      std::vector<std::atomic<int>> hits(count);
      parallel_for(count, [&](std::size_t i) { hits[i].fetch_add(1); });
      for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(hits[i].load(), 1) << i;
    }
  }
}

TEST(ThreadPool, UsesSeveralThreads) {
  ScopedNumThreads scoped(3);
  std::mutex mutex;
  std::set<std::thread::id> ids;
  std::atomic<int> arrived{0};
  // Each index waits until three have started, so three distinct threads must take part.
  parallel_for(3, [&](std::size_t) {
    arrived.fetch_add(1);
    while (arrived.load() < 3) std::this_thread::yield();
    std::lock_guard lock(mutex);
    ids.insert(std::this_thread::get_id());
  });
  EXPECT_EQ(ids.size(), 3u);
}

TEST(ThreadPool, RethrowsTheBodysExceptionAndStaysUsable) {
  ScopedNumThreads scoped(2);
  EXPECT_THROW(parallel_for(100,
                            [](std::size_t i) {
                              if (i == 42) throw std::runtime_error("boom");
                            }),
               std::runtime_error);
  std::atomic<int> sum{0};
  parallel_for(10, [&](std::size_t i) { sum += static_cast<int>(i); });
  EXPECT_EQ(sum.load(), 45);
}

TEST(ThreadPool, NestedCallsRunInline) {
  ScopedNumThreads scoped(2);
  std::atomic<int> inner{0};
  parallel_for(4, [&](std::size_t) { parallel_for(5, [&](std::size_t) { inner.fetch_add(1); }); });
  EXPECT_EQ(inner.load(), 20);
}

TEST(ThreadPool, RejectsZeroThreads) {
  EXPECT_THROW(set_num_threads(0), ArgumentError);
  EXPECT_GE(num_threads(), 1u);
}

TEST(ThreadPool, ThreadCountFromEnvironment) {
  EXPECT_EQ(thread_count_from_env("3"), 3u);
  EXPECT_GE(thread_count_from_env(nullptr), 1u);
  EXPECT_EQ(thread_count_from_env(""), thread_count_from_env(nullptr));
  for (const char* bad : {"0", "-2", "two", "3x", "100000"}) {
    try {
      thread_count_from_env(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), std::string("environment variable APEXNPU_NUM_THREADS='") + bad +
                                           "' is not a thread count between 1 and 1024");
    }
  }
}

// Workers restarted by set_num_threads once took the last finished job for a new one, which
// made a later parallel_for return early or wait forever.
TEST(ThreadPool, ResizingBetweenJobsKeepsEveryJobWhole) {
  for (int round = 0; round < 300; ++round) {
    ScopedNumThreads threads(1 + round % 3);
    for (int job = 0; job < 3; ++job) {
      std::atomic<std::size_t> done{0};
      parallel_for(64, [&](std::size_t) { done.fetch_add(1, std::memory_order_relaxed); });
      ASSERT_EQ(done.load(), 64u) << "round " << round << ", job " << job;
    }
  }
}

// Jobs short enough to finish before a worker wakes: the caller returns without the late
// workers, which must then leave that job alone and take part in a later one. Every index of
// every job runs exactly once, with jobs submitted from several threads.
TEST(ThreadPool, LateWorkersNeverTouchAFinishedJob) {
  ScopedNumThreads threads(3);
  std::vector<std::thread> callers;
  std::atomic<bool> failed{false};
  for (int c = 0; c < 3; ++c)
    callers.emplace_back([&] {
      for (int job = 0; job < 3000; ++job) {
        const std::size_t count = 2 + static_cast<std::size_t>(job % 5);
        std::vector<std::atomic<int>> hits(count);
        parallel_for(count, [&](std::size_t i) { hits[i].fetch_add(1); });
        for (auto& h : hits)
          if (h.load() != 1) failed = true;
      }
    });
  for (auto& t : callers) t.join();
  EXPECT_FALSE(failed.load());
}

}  // namespace
}  // namespace apexnpu::rt
