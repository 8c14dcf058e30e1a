#pragma once
// Runs N independent tasks on at most `workers` threads (each task typically waits on one
// compiler process). Stops handing out new tasks after the first failure; tasks already running
// finish. Every failure's message is kept, in task order.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace apexnpu::compile {

struct PoolOutcome {
  std::vector<std::pair<std::size_t, std::string>> failures;  // task index, what() of its error
  std::size_t completed = 0;
};

// `task(i)` throws on failure. `on_done(done, total)` is called (serialised) after each success.
// `order` (optional) is the order tasks are handed out in: longest first shortens the build.
PoolOutcome run_pool(std::size_t count, int workers, const std::function<void(std::size_t)>& task,
                     const std::function<void(std::size_t, std::size_t)>& on_done = {},
                     const std::vector<std::size_t>& order = {});

}  // namespace apexnpu::compile
