#pragma once
// The one job pool of the toolchain: every fan-out (compiling units, reading and creating trees,
// inflating blobs, diffing files, the phases make-patch runs side by side) goes through it. It
// starts its threads for one call and joins them before returning, so a job may itself run a
// pool (no shared queue to deadlock on).
//
// Threads: thread_count() is the one rule for how many threads a kind of work gets. A pool never
// runs more threads than it has jobs; the calling thread is one of them.
//
// Failures: jobs are numbered 0..count-1 (their submission order, whatever order they are handed
// out in). After job f fails, no job numbered after f is started; jobs numbered before it still
// run. So the failure reported is always the one of the lowest-numbered failing job: the one a
// single thread running the jobs in order would have stopped at, whatever the timing.
// PoolOutcome::failures holds every failure that happened, in job order, that one first;
// run_jobs() and run_side_by_side() rethrow it (the original exception, hint and type intact).
#include <cstddef>
#include <exception>
#include <functional>
#include <string>
#include <vector>

namespace apexnpu::core {

enum class WorkKind {
  // File-system, inflating and diffing work: mostly system calls and memory traffic, which stop
  // scaling well before a large machine's core count: a few threads (at most 4).
  io,
  // Jobs that each wait on a compiler process: one thread per hardware thread.
  compile,
};

// How many threads `kind` of work gets: `requested` when it is positive (e.g. build -j), else
// the kind's rule above; never less than 1.
std::size_t thread_count(WorkKind kind, int requested = 0);

struct JobFailure {
  std::size_t job;           // its number
  std::exception_ptr error;  // what it threw
  std::string what;          // error's what() ("unknown error" for a non-std::exception)
};

struct PoolOutcome {
  std::vector<JobFailure> failures;  // in job order; the first is the one to report
  std::size_t completed = 0;         // jobs that succeeded
  // Rethrows the first failure; does nothing when every job succeeded.
  void rethrow_first() const;
};

// job(i, worker): runs job i on the worker numbered `worker` (0..threads-1; 0 is the calling
// thread), for state kept per thread; throws on failure.
using Job = std::function<void(std::size_t job, std::size_t worker)>;

struct PoolOptions {
  // The order jobs are handed out in, a permutation of 0..count-1 (empty: 0, 1, ...): longest
  // first shortens the whole run. It does not change which failure is reported.
  std::vector<std::size_t> order;
  // Called (serialised) after each success with the number of successes so far and count.
  std::function<void(std::size_t done, std::size_t total)> on_done;
};

// Runs jobs 0..count-1 on at most `threads` threads and says what failed.
PoolOutcome run_pool(std::size_t count, std::size_t threads, const Job& job, const PoolOptions& options = {});

// run_pool, then rethrows the first failure.
void run_jobs(std::size_t count, std::size_t threads, const Job& job, const PoolOptions& options = {});

// Runs different pieces of work side by side, one thread each, and rethrows the failure of the
// first one (in the list's order) that failed.
void run_side_by_side(const std::vector<std::function<void()>>& work);

}  // namespace apexnpu::core
