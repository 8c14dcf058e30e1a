#include "git/upstream.h"

#include <fmt/core.h>

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <system_error>

#include "core/error.h"
#include "fs/staging.h"
#include "git/cache_lock.h"
#include "git/guarded_objects.h"
#include "git/libgit2.h"
#include "git/repository_dirs.h"
#include "git/tree_reader.h"

namespace apexnpu::git {
namespace stdfs = std::filesystem;

namespace {

bool is_url(const std::string& upstream) {
  if (upstream.find("://") != std::string::npos) return true;
  // scp-like "user@host:path"
  const auto at = upstream.find('@');
  const auto colon = upstream.find(':');
  return at != std::string::npos && colon != std::string::npos && at < colon && upstream.find('/') > colon;
}

bool is_full_sha(const std::string& ref) {
  return ref.size() == GIT_OID_HEXSZ && ref.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// <slug>-<hash>: readable, and distinct for distinct URLs.
std::string cache_name(const std::string& url) {
  std::uint64_t hash = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : url) hash = (hash ^ c) * 1099511628211ull;
  std::string slug;
  for (char c : url.substr(url.find("://") == std::string::npos ? 0 : url.find("://") + 3)) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-';
    if (!keep && !slug.empty() && slug.back() == '_') continue;
    slug += keep ? c : '_';
  }
  if (slug.size() > 60) slug = slug.substr(slug.size() - 60);
  return fmt::format("{}-{:016x}", slug, hash);
}

int transfer_progress(const git_indexer_progress* stats, void* payload) {
  const auto& callback = *static_cast<const std::function<void(const TransferProgress&)>*>(payload);
  if (callback)
    callback(TransferProgress{stats->received_objects, stats->total_objects, stats->received_bytes});
  return 0;
}

// Branches under refs/remotes/origin/ and every tag, so branch and tag refs resolve in the cache.
int create_cache_remote(git_remote** out, git_repository* repo, const char* name, const char* url, void*) {
  return libgit2().git_remote_create_with_fetchspec(out, repo, name, url,
                                                    "+refs/heads/*:refs/remotes/origin/*");
}

git_fetch_options fetch_options(const UpstreamRequest& request) {
  git_fetch_options options;
  libgit2().git_fetch_options_init(&options, GIT_FETCH_OPTIONS_VERSION);
  options.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_ALL;
  options.prune = GIT_FETCH_PRUNE;
  options.callbacks.transfer_progress = transfer_progress;
  options.callbacks.payload = const_cast<std::function<void(const TransferProgress&)>*>(&request.on_progress);
  return options;
}

// Clones into a staging directory beside the cache's copy and renames it into place: a killed
// clone leaves no half copy (the next run removes its staging).
void clone_into_cache(const UpstreamRequest& request, const stdfs::path& target) {
  fs::remove_stale_staging(target);
  fs::StagingDir staging(target);
  stdfs::remove(staging.path());  // git_clone wants to create the directory itself
  git_clone_options options;
  libgit2().git_clone_options_init(&options, GIT_CLONE_OPTIONS_VERSION);
  options.bare = 1;
  options.local = GIT_CLONE_LOCAL_NO_LINKS;
  options.remote_cb = create_cache_remote;
  options.fetch_opts = fetch_options(request);
  git_repository* raw = nullptr;
  check(libgit2().git_clone(&raw, request.upstream.c_str(), staging.path().c_str(), &options),
        fmt::format("cannot clone {}", request.upstream));
  Repository(raw).reset();
  if (::rename(staging.path().c_str(), target.c_str()) != 0)
    throw Error(
        fmt::format("cannot move the clone of {} into the cache at {}", request.upstream, target.string()));
  staging.release();
}

// Fetches with libgit2's own handle on the cache's copy (it writes; every read goes through
// open_repository's checks).
void fetch(const stdfs::path& target, const UpstreamRequest& request) {
  git_repository* raw_repo = nullptr;
  check(libgit2().git_repository_open_bare(&raw_repo, target.c_str()),
        fmt::format("cannot open the cached clone {}", target.string()));
  const Repository repo(raw_repo);
  git_remote* raw = nullptr;
  check(libgit2().git_remote_lookup(&raw, repo.get(), "origin"), "the cached clone has no origin remote");
  Remote remote(raw);
  git_fetch_options options = fetch_options(request);
  const char* tags = "+refs/tags/*:refs/tags/*";
  const char* heads = "+refs/heads/*:refs/remotes/origin/*";
  char* specs[] = {const_cast<char*>(heads), const_cast<char*>(tags)};
  git_strarray refspecs{specs, 2};
  check(libgit2().git_remote_fetch(remote.get(), &refspecs, &options, nullptr),
        fmt::format("cannot fetch {}", request.upstream));
}

Commit resolve_in_cache(git_repository* repo, const std::string& ref, const std::string& where) {
  if (Commit c = find_commit(repo, ref, where)) return c;
  return find_commit(repo, "origin/" + ref, where);
}

UpstreamTree read_commit(git_repository* repo, const git_commit* commit, UpstreamContent content,
                         UpstreamTree result) {
  result.commit = commit_sha(commit);
  if (content == UpstreamContent::files)
    result.tree = read_commit_tree(repo, commit, result.skipped_submodules);
  else
    result.blobs = list_commit_blobs(commit, result.skipped_submodules);
  return result;
}

UpstreamTree read_in_place(const UpstreamRequest& request, UpstreamContent content) {
  std::error_code ec;
  const stdfs::path path = stdfs::absolute(request.upstream, ec);
  const Repository repo = open_repository(path);
  Commit commit = find_commit(repo.get(), request.ref, request.upstream);
  if (!commit)
    throw Error(fmt::format("the ref {} is not in the upstream repository {}", request.ref, request.upstream),
                "pass --ref with a branch, tag or commit sha that the repository has");
  UpstreamTree result;
  result.url = request.upstream;
  result.repository = path;
  result.read_in_place = true;
  return read_commit(repo.get(), commit.get(), content, std::move(result));
}

UpstreamTree read_through_cache(const UpstreamRequest& request, UpstreamContent content) {
  const stdfs::path repos = (request.cache_dir.empty() ? default_cache_dir() : request.cache_dir) / "repos";
  const std::string name = cache_name(request.upstream);
  const stdfs::path target = repos / name;
  std::error_code ec;
  if (request.offline && !stdfs::exists(target, ec))
    throw Error(fmt::format("--offline: the cache has no copy of {} (looked in {})", request.upstream,
                            target.string()),
                "run once without --offline to clone it");
  stdfs::create_directories(repos, ec);
  if (ec)
    throw Error(fmt::format("cannot create the cache directory {}: {}", repos.string(), ec.message()),
                "pass --clone-cache DIR, or set XDG_CACHE_HOME to a writable directory");
  const CacheLock lock(repos / (name + ".lock"));

  UpstreamTree result;
  result.url = request.upstream;
  result.repository = target;
  if (!stdfs::exists(target, ec)) {
    clone_into_cache(request, target);
    result.fetched = true;
  }
  Repository repo = open_repository(target);
  const std::string where = fmt::format("the cached copy of {}", request.upstream);
  Commit commit;
  const bool present_sha =
      is_full_sha(request.ref) && (commit = resolve_in_cache(repo.get(), request.ref, where));
  if (!present_sha && !result.fetched && !request.offline) {
    repo.reset();
    fetch(target, request);
    result.fetched = true;
    repo = open_repository(target);
  }
  if (!commit) commit = resolve_in_cache(repo.get(), request.ref, where);
  if (!commit) {
    if (request.offline)
      throw Error(
          fmt::format("--offline: the ref {} is not in the cached copy of {}", request.ref, request.upstream),
          "run without --offline to fetch it, or pass another --ref");
    throw Error(fmt::format("the ref {} is not in {}", request.ref, request.upstream),
                "pass --ref with a branch, tag or commit sha that the upstream has");
  }
  return read_commit(repo.get(), commit.get(), content, std::move(result));
}

}  // namespace

stdfs::path default_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/')
    return stdfs::path(xdg) / "apexnpu";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    return stdfs::path(home) / ".cache" / "apexnpu";
  throw Error("cannot find a cache directory: neither XDG_CACHE_HOME nor HOME is set",
              "pass --clone-cache DIR");
}

UpstreamTree read_upstream(const UpstreamRequest& request, UpstreamContent content) {
  if (request.upstream.empty())
    throw UsageError("no upstream given", "pass --upstream URL|PATH or set APEXNPU_UPSTREAM");
  if (request.ref.empty()) throw UsageError("--ref is empty", "pass a branch, tag or commit");
  UpstreamTree result;
  if (is_url(request.upstream)) {
    result = read_through_cache(request, content);
  } else {
    std::error_code ec;
    if (!stdfs::exists(request.upstream, ec))
      throw Error(fmt::format("the upstream {} does not exist", request.upstream),
                  "pass --upstream with a local repository path or a URL");
    result = read_in_place(request, content);
  }
  result.read_dirs = repository_dirs(result.repository);
  return result;
}

}  // namespace apexnpu::git
