#include "git/blob_id.h"

#include <fmt/core.h>
#include <openssl/evp.h>

#include <memory>

#include "core/error.h"

namespace apexnpu::git {

git_oid blob_id(std::string_view content) {
  const std::string header = fmt::format("blob {}", content.size());
  const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  git_oid id;
  unsigned int length = 0;
  // The header's terminating NUL is part of what git hashes.
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha1(), nullptr) != 1 ||
      EVP_DigestUpdate(context.get(), header.c_str(), header.size() + 1) != 1 ||
      EVP_DigestUpdate(context.get(), content.data(), content.size()) != 1 ||
      EVP_DigestFinal_ex(context.get(), id.id, &length) != 1 || length != sizeof id.id)
    throw Error("cannot compute a SHA-1 digest (OpenSSL)");
  return id;
}

}  // namespace apexnpu::git
