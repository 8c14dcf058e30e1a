#pragma once
// A loose object file checked before libgit2 reads it. libgit2 1.5.1 (Debian 12's) trusts the
// size a loose object's header claims: when the object holds more bytes than that, it writes
// past the buffer it sized from the claim (libgit2 issue 7177); when the zlib stream is cut
// short it loops for ever. This check inflates the object once, never keeping more than a small
// buffer and stopping one byte past the claim, so no such file reaches libgit2.
#include <optional>
#include <string>
#include <string_view>

namespace apexnpu::git {

// Why the bytes of a loose object file are not one object as its header describes it ("<type>
// <size>\0" and exactly that many bytes, in one complete zlib stream), or nothing when they are.
std::optional<std::string> loose_object_damage(std::string_view compressed);

}  // namespace apexnpu::git
