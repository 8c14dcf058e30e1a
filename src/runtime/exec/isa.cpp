#include "exec/isa.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

#include "exec/cpu_probe.h"
#include "exec/error.h"

namespace apexnpu::rt {
namespace {

#define APEXNPU_ISA_NAME(level, ...) #level,
constexpr const char* kNames[] = {APEXNPU_ISA_LEVELS(APEXNPU_ISA_NAME)};
#undef APEXNPU_ISA_NAME

using Probe = bool (*)() noexcept;
#define APEXNPU_ISA_PROBE(level, ...) &cpu::runs_##level,
constexpr Probe kProbes[] = {APEXNPU_ISA_LEVELS(APEXNPU_ISA_PROBE)};
#undef APEXNPU_ISA_PROBE

bool is_level(int value) noexcept { return value >= 0 && value < kIsaLevelCount; }

// "a, b or c" over every level, each written by `part`.
template <typename Part>
std::string every_level(Part&& part) {
  std::string s;
  for (int i = 0; i < kIsaLevelCount; ++i) {
    if (i > 0) s += i + 1 == kIsaLevelCount ? " or " : ", ";
    s += part(i);
  }
  return s;
}

IsaLevel default_level() { return isa_level_from_env(std::getenv("APEXNPU_ISA")); }

constexpr int kUnset = -1;
std::atomic<int> g_active{kUnset};
std::mutex g_init_mutex;

}  // namespace

IsaLevel isa_level_from_env(const char* env) {
  if (env == nullptr || *env == '\0') return best_supported_isa();
  IsaLevel level;
  try {
    level = parse_isa(env);
  } catch (const ArgumentError& e) {
    throw Error(concat("environment variable APEXNPU_ISA: ", e.what()));
  }
  if (!isa_supported(level))
    throw Error(concat("environment variable APEXNPU_ISA=", env,
                       " but this CPU does not support it; best supported is ",
                       isa_name(best_supported_isa())));
  return level;
}

bool isa_supported(IsaLevel level) noexcept {
  const int value = static_cast<int>(level);
  return is_level(value) && kProbes[value]();
}

IsaLevel best_supported_isa() noexcept {
  // Each level includes the ones below it, so the best is the highest the CPU runs.
  static const IsaLevel best = [] {
    int level = kIsaLevelCount - 1;
    while (level > 0 && !kProbes[level]()) --level;
    return static_cast<IsaLevel>(level);
  }();
  return best;
}

IsaLevel active_isa() {
  int level = g_active.load(std::memory_order_acquire);
  if (level != kUnset) return static_cast<IsaLevel>(level);
  std::lock_guard lock(g_init_mutex);
  level = g_active.load(std::memory_order_acquire);
  if (level == kUnset) {
    level = static_cast<int>(default_level());
    g_active.store(level, std::memory_order_release);
  }
  return static_cast<IsaLevel>(level);
}

void set_isa_level(IsaLevel level) {
  const int value = static_cast<int>(level);
  if (!is_level(value))
    throw ArgumentError(concat("ISA level must be ",
                               every_level([](int i) { return concat(i, " (", kNames[i], ")"); }), ", got ",
                               value));
  if (!isa_supported(level))
    throw ArgumentError(concat("ISA level ", isa_name(level),
                               " is not supported by this CPU; best supported is ",
                               isa_name(best_supported_isa())));
  g_active.store(value, std::memory_order_release);
}

void reset_isa_level() { g_active.store(kUnset, std::memory_order_release); }

const char* isa_name(IsaLevel level) noexcept {
  const int value = static_cast<int>(level);
  return is_level(value) ? kNames[value] : "unknown";
}

IsaLevel parse_isa(std::string_view name) {
  for (int i = 0; i < kIsaLevelCount; ++i)
    if (name == kNames[i]) return static_cast<IsaLevel>(i);
  throw ArgumentError(concat("unknown ISA level '", name, "'; expected ",
                             every_level([](int i) { return std::string(kNames[i]); })));
}

}  // namespace apexnpu::rt
