#include "git/guarded_objects.h"

#include <fmt/core.h>
#include <git2/sys/odb_backend.h>
#include <git2/sys/repository.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "fs/file_io.h"
#include "git/alternates.h"
#include "git/loose_object_check.h"
#include "git/pack_check.h"

namespace apexnpu::git {
namespace stdfs = std::filesystem;

namespace {

// libgit2's order: packs before loose objects, the repository's own before its alternates.
constexpr int kPackPriority = 2, kLoosePriority = 1;

std::string hex_of(const git_oid& id) {
  char hex[GIT_OID_HEXSZ + 1];
  libgit2().git_oid_tostr(hex, sizeof hex, &id);
  return hex;
}

// What a guard checks an object with before its backend reads it: why it cannot be read, or
// nothing.
class ObjectCheck {
 public:
  virtual ~ObjectCheck() = default;
  virtual std::optional<std::string> damage(const git_oid& id) const = 0;
};

class LooseCheck final : public ObjectCheck {
 public:
  explicit LooseCheck(stdfs::path objects_dir) : objects_dir_(std::move(objects_dir)) {}
  std::optional<std::string> damage(const git_oid& id) const override {
    const std::string hex = hex_of(id);
    const stdfs::path file = objects_dir_ / hex.substr(0, 2) / hex.substr(2);
    const std::optional<std::string> bytes = try_read_file(file);
    if (!bytes) return std::nullopt;  // absent: libgit2 says so (or finds it elsewhere)
    if (auto why = loose_object_damage(*bytes))
      return fmt::format("the loose object {} is damaged: {}", file.string(), *why);
    return std::nullopt;
  }

 private:
  stdfs::path objects_dir_;
};

class PackedCheck final : public ObjectCheck {
 public:
  explicit PackedCheck(std::unique_ptr<CheckedPack> pack) : pack_(std::move(pack)) {}
  std::optional<std::string> damage(const git_oid& id) const override {
    const std::optional<std::uint64_t> offset = pack_->find(id);
    if (!offset) return std::nullopt;
    if (auto why = pack_->delta_chain_damage(*offset))
      return fmt::format("object {} of the pack {} cannot be read: {}", hex_of(id),
                         pack_->index_path().string(), *why);
    return std::nullopt;
  }

 private:
  std::unique_ptr<CheckedPack> pack_;
};

// A libgit2 backend that checks each object before handing the read to the backend it wraps.
// libgit2 sees only `base`, the first member; it never writes through it (the repository's
// objects are only read here).
struct GuardedBackend {
  git_odb_backend base;
  git_odb_backend* inner;
  std::unique_ptr<ObjectCheck> check;
};

GuardedBackend& guarded(git_odb_backend* backend) { return *reinterpret_cast<GuardedBackend*>(backend); }

// Runs the check on `id`; false (with libgit2's error set to why) when the object is refused.
// Nothing may throw through libgit2's C frames.
bool passes(GuardedBackend& g, const git_oid& id) noexcept {
  g.inner->odb = g.base.odb;
  std::string refused;
  try {
    const std::optional<std::string> why = g.check->damage(id);
    if (!why) return true;
    refused = *why;
  } catch (const std::exception& e) {
    refused = e.what();
  }
  libgit2().git_error_set_str(GIT_ERROR_ODB, refused.c_str());
  return false;
}

int guarded_read(void** data, size_t* size, git_object_t* type, git_odb_backend* backend, const git_oid* id) {
  GuardedBackend& g = guarded(backend);
  if (!passes(g, *id)) return GIT_ERROR;
  return g.inner->read(data, size, type, g.inner, id);
}

int guarded_read_header(size_t* size, git_object_t* type, git_odb_backend* backend, const git_oid* id) {
  GuardedBackend& g = guarded(backend);
  if (!passes(g, *id)) return GIT_ERROR;
  return g.inner->read_header(size, type, g.inner, id);
}

int guarded_read_prefix(git_oid* out, void** data, size_t* size, git_object_t* type, git_odb_backend* backend,
                        const git_oid* prefix, size_t length) {
  GuardedBackend& g = guarded(backend);
  git_oid full;
  if (const int rc = g.inner->exists_prefix(&full, g.inner, prefix, length); rc < 0) return rc;
  if (!passes(g, full)) return GIT_ERROR;
  return g.inner->read_prefix(out, data, size, type, g.inner, prefix, length);
}

int guarded_exists(git_odb_backend* backend, const git_oid* id) {
  GuardedBackend& g = guarded(backend);
  return g.inner->exists(g.inner, id);
}

int guarded_exists_prefix(git_oid* out, git_odb_backend* backend, const git_oid* prefix, size_t length) {
  GuardedBackend& g = guarded(backend);
  return g.inner->exists_prefix(out, g.inner, prefix, length);
}

int guarded_refresh(git_odb_backend* backend) {
  GuardedBackend& g = guarded(backend);
  return g.inner->refresh != nullptr ? g.inner->refresh(g.inner) : 0;
}

void guarded_free(git_odb_backend* backend) {
  GuardedBackend* g = &guarded(backend);
  g->inner->free(g->inner);
  delete g;
}

// Wraps `inner` (taking it over) and adds it to `odb`; the odb owns the result.
void add_guarded(git_odb* odb, git_odb_backend* inner, std::unique_ptr<ObjectCheck> object_check,
                 int priority, bool alternate, const std::string& what) {
  auto g = std::make_unique<GuardedBackend>();
  g->base.version = GIT_ODB_BACKEND_VERSION;
  g->base.read = guarded_read;
  g->base.read_header = guarded_read_header;
  g->base.read_prefix = guarded_read_prefix;
  g->base.exists = guarded_exists;
  g->base.exists_prefix = guarded_exists_prefix;
  g->base.refresh = guarded_refresh;
  g->base.free = guarded_free;
  g->inner = inner;
  g->check = std::move(object_check);
  const auto add = alternate ? libgit2().git_odb_add_alternate : libgit2().git_odb_add_backend;
  if (add(odb, &g->base, priority) < 0) {
    guarded_free(&g.release()->base);
    check(-1, fmt::format("cannot read {}", what));
  }
  g.release();
}

// A directory's packs, each checked, sorted by name so every run reads them in one order.
std::vector<stdfs::path> pack_indexes(const stdfs::path& objects_dir) {
  std::vector<stdfs::path> indexes;
  std::error_code ec;
  for (stdfs::directory_iterator it(objects_dir / "pack", ec), end; !ec && it != end; it.increment(ec)) {
    const stdfs::path& p = it->path();
    if (p.extension() != ".idx") continue;
    if (!stdfs::is_regular_file(stdfs::path(p).replace_extension(".pack"), ec)) continue;
    indexes.push_back(p);
  }
  std::sort(indexes.begin(), indexes.end());
  return indexes;
}

void add_object_dir(git_odb* odb, const stdfs::path& objects_dir, bool alternate) {
  for (const stdfs::path& index : pack_indexes(objects_dir)) {
    auto checked = std::make_unique<CheckedPack>(index);  // throws naming a damaged index
    git_odb_backend* pack = nullptr;
    check(libgit2().git_odb_backend_one_pack(&pack, index.c_str()),
          fmt::format("cannot open the pack {}", index.string()));
    add_guarded(odb, pack, std::make_unique<PackedCheck>(std::move(checked)), kPackPriority, alternate,
                index.string());
  }
  git_odb_backend* loose = nullptr;
  check(libgit2().git_odb_backend_loose(&loose, objects_dir.c_str(), -1, 0, 0, 0),
        fmt::format("cannot read the objects in {}", objects_dir.string()));
  add_guarded(odb, loose, std::make_unique<LooseCheck>(objects_dir), kLoosePriority, alternate,
              objects_dir.string());
}

}  // namespace

Repository open_repository(const stdfs::path& path) {
  git_repository* raw = nullptr;
  check(libgit2().git_repository_open_ext(&raw, path.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr),
        fmt::format("cannot open the repository {}", path.string()));
  Repository repo(raw);
  const stdfs::path objects = stdfs::path(libgit2().git_repository_commondir(repo.get())) / "objects";
  git_odb* raw_odb = nullptr;
  check(libgit2().git_odb_new(&raw_odb), "cannot make an object database");
  const Odb odb(raw_odb);
  add_object_dir(odb.get(), objects, false);
  for (const stdfs::path& alternate : alternate_object_dirs(objects))
    add_object_dir(odb.get(), alternate, true);
  check(libgit2().git_repository_set_odb(repo.get(), odb.get()),
        fmt::format("cannot read the objects of {}", path.string()));
  return repo;  // the repository holds its own reference to the odb
}

}  // namespace apexnpu::git
