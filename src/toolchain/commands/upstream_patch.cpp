#include "commands/upstream_patch.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <optional>
#include <thread>

#include "core/io_threads.h"
#include "git/upstream_blobs.h"
#include "patch/patch_engine.h"

namespace apexnpu::commands {

std::string write_upstream_patch(const git::UpstreamTree& upstream, const FileTree& edited,
                                 const std::vector<std::string>& paths) {
  const std::vector<std::string> order = patch::section_order(edited, paths);
  std::vector<std::string> sections(order.size());
  std::vector<std::exception_ptr> errors(order.size());
  // Paths are handed out one at a time, the largest edited files first: one long diff, started
  // last, would hold everything back.
  auto size_of = [&](const std::string& path) {
    const auto it = edited.find(path);
    return it == edited.end() ? 0 : it->second.content.size();
  };
  std::vector<std::size_t> queue(order.size());
  for (std::size_t i = 0; i < queue.size(); ++i) queue[i] = i;
  std::stable_sort(queue.begin(), queue.end(), [&](std::size_t x, std::size_t y) {
    return size_of(order[x]) > size_of(order[y]);
  });
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    std::optional<git::UpstreamBlobs> blobs;
    for (std::size_t q; (q = next.fetch_add(1)) < queue.size();) {
      const std::size_t i = queue[q];
      try {
        if (!blobs) blobs.emplace(upstream);
        const std::optional<FileEntry> before = blobs->read(order[i]);
        const auto after = edited.find(order[i]);
        sections[i] = patch::write_section(order[i], before ? &*before : nullptr,
                                           after == edited.end() ? nullptr : &after->second);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const std::size_t threads = std::min(io_threads(), order.size());
  std::vector<std::jthread> helpers;
  for (std::size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
  work();
  helpers.clear();  // joins

  for (const auto& error : errors)
    if (error) std::rethrow_exception(error);
  std::size_t size = 0;
  for (const auto& s : sections) size += s.size();
  std::string out;
  out.reserve(size);
  for (const auto& s : sections) out += s;
  return out;
}

}  // namespace apexnpu::commands
