#pragma once
// Version strings as the compatibility matrix writes them ("2.1.0.post17", "1.11.0.rc1",
// "8.0.RC3", "6.3.RC3.1") and as users type them ("2.13.0+cpu", "2.1"): how a query matches a
// listed version and which of two releases is newer.
#include <string>
#include <vector>

namespace apexnpu::manifest {

// "1.11.0.rc2" -> "1.11.0"; "1.5.0.post3" -> "1.5.0"; "1.8.1" -> "1.8.1".
std::string release_of(const std::string& version);

// A version a user may ask about: digits and dots, an optional pre/post/dev suffix and an
// optional local part ("2.13.0+cpu"). Anything else is refused before it is looked up.
bool is_version(const std::string& text);

// The local part dropped: torch.__version__ "2.13.0+cpu" asks about torch 2.13.0.
std::string without_local(const std::string& version);

// The numbers of the release part: "2.1.0.post4" -> {2, 1, 0}.
std::vector<int> release_numbers(const std::string& version);

// <0, 0, >0 as release a is older than, the same as, or newer than release b (a missing trailing
// number counts as 0, so "2.14" equals "2.14.0"); pre/post suffixes are not compared.
int compare_releases(const std::string& a, const std::string& b);

// `query` names `listed` exactly, or a pre/post-release of it ("1.11.0" names "1.11.0.rc1"),
// or a line it belongs to ("2.1" names "2.1.0.post4"). Compared without case ("8.0.rc3").
bool names_exactly(const std::string& query, const std::string& listed);
bool names_loosely(const std::string& query, const std::string& listed);

}  // namespace apexnpu::manifest
