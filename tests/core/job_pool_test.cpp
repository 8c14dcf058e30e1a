// The job pool (core/job_pool.h): every job runs once, on at most the threads asked for; the
// failure reported is the lowest-numbered one whatever the hand-out order and timing; jobs after
// a failure are not started, jobs before it still are; the thread-count rule.
#include "core/job_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace apexnpu::core {
namespace {

struct JobError : std::runtime_error {
  explicit JobError(std::size_t job) : std::runtime_error("job " + std::to_string(job)), job(job) {}
  std::size_t job;
};

std::vector<std::size_t> reversed(std::size_t count) {
  std::vector<std::size_t> order(count);
  std::iota(order.rbegin(), order.rend(), std::size_t{0});
  return order;
}

TEST(JobPool, RunsEveryJobOnceOnAtMostTheThreadsAsked) {
  std::vector<std::atomic<int>> runs(1000);
  std::mutex mutex;
  std::set<std::size_t> workers;
  std::set<std::thread::id> threads;
  const PoolOutcome outcome = run_pool(runs.size(), 3, [&](std::size_t i, std::size_t worker) {
    ++runs[i];
    const std::lock_guard lock(mutex);
    workers.insert(worker);
    threads.insert(std::this_thread::get_id());
  });
  EXPECT_TRUE(outcome.failures.empty());
  EXPECT_EQ(outcome.completed, runs.size());
  for (const auto& r : runs) EXPECT_EQ(r.load(), 1);
  EXPECT_LE(threads.size(), 3u);
  for (const std::size_t w : workers) EXPECT_LT(w, 3u);
}

TEST(JobPool, NoJobsAndMoreThreadsThanJobs) {
  EXPECT_EQ(run_pool(0, 4, [](std::size_t, std::size_t) { FAIL(); }).completed, 0u);
  std::set<std::size_t> workers;
  std::mutex mutex;
  run_jobs(2, 64, [&](std::size_t, std::size_t worker) {
    const std::lock_guard lock(mutex);
    workers.insert(worker);
  });
  for (const std::size_t w : workers) EXPECT_LT(w, 2u);
}

TEST(JobPool, JobsAfterAFailureAreNotStarted) {
  std::vector<std::size_t> ran;
  const PoolOutcome outcome = run_pool(10, 1, [&](std::size_t i, std::size_t) {
    ran.push_back(i);
    if (i == 3) throw JobError(i);
  });
  EXPECT_EQ(ran, (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_EQ(outcome.completed, 3u);
  ASSERT_EQ(outcome.failures.size(), 1u);
  EXPECT_EQ(outcome.failures[0].job, 3u);
  EXPECT_EQ(outcome.failures[0].what, "job 3");
}

TEST(JobPool, JobsBeforeAFailureStillRunAndTheLowestFailureIsReported) {
  // Handed out last to first: 7 fails first, then 6..0 still run, and 2 fails too.
  std::vector<std::size_t> ran;
  PoolOptions options;
  options.order = reversed(10);
  const PoolOutcome outcome = run_pool(
      10, 1,
      [&](std::size_t i, std::size_t) {
        ran.push_back(i);
        if (i == 7 || i == 2) throw JobError(i);
      },
      options);
  EXPECT_EQ(ran, (std::vector<std::size_t>{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  ASSERT_EQ(outcome.failures.size(), 2u);
  EXPECT_EQ(outcome.failures[0].job, 2u);
  EXPECT_EQ(outcome.failures[1].job, 7u);
  try {
    outcome.rethrow_first();
    FAIL() << "no exception";
  } catch (const JobError& e) {  // the job's own exception, not a copy of its message
    EXPECT_EQ(e.job, 2u);
  }
}

TEST(JobPool, TheReportedFailureDoesNotDependOnTiming) {
  for (int round = 0; round < 20; ++round) {
    PoolOptions options;
    if (round % 2 == 1) options.order = reversed(200);
    try {
      run_jobs(
          200, 4,
          [&](std::size_t i, std::size_t) {
            if (i % 37 == 36) throw JobError(i);  // 36, 73, 110, ...
          },
          options);
      FAIL() << "no exception";
    } catch (const JobError& e) {
      EXPECT_EQ(e.job, 36u) << "round " << round;
    }
  }
}

TEST(JobPool, OnDoneCountsSuccesses) {
  std::vector<std::size_t> done;
  PoolOptions options;
  options.on_done = [&](std::size_t n, std::size_t total) {
    EXPECT_EQ(total, 50u);
    done.push_back(n);
  };
  run_jobs(
      50, 4, [](std::size_t, std::size_t) {}, options);
  ASSERT_EQ(done.size(), 50u);
  for (std::size_t k = 0; k < done.size(); ++k) EXPECT_EQ(done[k], k + 1);
}

TEST(JobPool, SideBySideRunsEachPieceOnAThreadOfItsOwn) {
  // Each piece waits until the other has started: one after the other, neither would finish.
  std::atomic<int> started{0};
  auto meet = [&] {
    ++started;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (started.load() < 2)
      if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("not side by side");
  };
  EXPECT_NO_THROW(run_side_by_side({meet, meet}));
}

TEST(JobPool, SideBySideReportsTheFirstPieceThatFailed) {
  for (int round = 0; round < 20; ++round) {
    try {
      run_side_by_side({[] { throw JobError(0); }, [] { throw JobError(1); }});
      FAIL() << "no exception";
    } catch (const JobError& e) {
      EXPECT_EQ(e.job, 0u);
    }
  }
}

TEST(JobPool, ThreadCounts) {
  EXPECT_EQ(thread_count(WorkKind::io, 7), 7u);
  EXPECT_EQ(thread_count(WorkKind::compile, 3), 3u);
  EXPECT_GE(thread_count(WorkKind::io), 1u);
  EXPECT_LE(thread_count(WorkKind::io), 4u);
  EXPECT_GE(thread_count(WorkKind::compile), 1u);
  EXPECT_GE(thread_count(WorkKind::compile), thread_count(WorkKind::io));
}

}  // namespace
}  // namespace apexnpu::core
