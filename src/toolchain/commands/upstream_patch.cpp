#include "commands/upstream_patch.h"

#include <algorithm>
#include <optional>

#include "core/job_pool.h"
#include "git/upstream_blobs.h"
#include "patch/patch_engine.h"

namespace apexnpu::commands {

std::string write_upstream_patch(const git::UpstreamTree& upstream, const FileTree& edited,
                                 const std::vector<std::string>& paths) {
  const std::vector<std::string> order = patch::section_order(edited, paths);
  std::vector<std::string> sections(order.size());
  // Paths are handed out one at a time, the largest edited files first: one long diff, started
  // last, would hold everything back.
  auto size_of = [&](const std::string& path) {
    const auto it = edited.find(path);
    return it == edited.end() ? 0 : it->second.content.size();
  };
  core::PoolOptions options;
  options.order.resize(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) options.order[i] = i;
  std::stable_sort(options.order.begin(), options.order.end(),
                   [&](std::size_t x, std::size_t y) { return size_of(order[x]) > size_of(order[y]); });
  const std::size_t threads = core::thread_count(core::WorkKind::io);
  std::vector<std::optional<git::UpstreamBlobs>> blobs(threads);  // one reader per thread
  core::run_jobs(
      order.size(), threads,
      [&](std::size_t i, std::size_t worker) {
        if (!blobs[worker]) blobs[worker].emplace(upstream);
        const std::optional<FileEntry> before = blobs[worker]->read(order[i]);
        const auto after = edited.find(order[i]);
        sections[i] = patch::write_section(order[i], before ? &*before : nullptr,
                                           after == edited.end() ? nullptr : &after->second);
      },
      options);

  std::size_t size = 0;
  for (const auto& s : sections) size += s.size();
  std::string out;
  out.reserve(size);
  for (const auto& s : sections) out += s;
  return out;
}

}  // namespace apexnpu::commands
