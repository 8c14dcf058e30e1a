#include "exec/isa.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

#include "exec/error.h"

namespace apexnpu::rt {
namespace {

bool cpu_has_avx2_level() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  // libgcc's cpu model checks XCR0 (xgetbv) too, so these are false if the OS does not save
  // the AVX / AVX-512 state.
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
         __builtin_cpu_supports("f16c");
#else
  return false;
#endif
}

bool cpu_has_avx512_level() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return cpu_has_avx2_level() && __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512dq");
#else
  return false;
#endif
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
  switch (level) {
    case IsaLevel::scalar: return true;
    case IsaLevel::avx2: return cpu_has_avx2_level();
    case IsaLevel::avx512: return cpu_has_avx512_level();
  }
  return false;
}

IsaLevel best_supported_isa() noexcept {
  static const IsaLevel best = cpu_has_avx512_level() ? IsaLevel::avx512
                               : cpu_has_avx2_level() ? IsaLevel::avx2
                                                      : IsaLevel::scalar;
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
  if (value < 0 || value >= kIsaLevelCount)
    throw ArgumentError(concat("ISA level must be 0 (scalar), 1 (avx2) or 2 (avx512), got ", value));
  if (!isa_supported(level))
    throw ArgumentError(concat("ISA level ", isa_name(level),
                               " is not supported by this CPU; best supported is ",
                               isa_name(best_supported_isa())));
  g_active.store(value, std::memory_order_release);
}

void reset_isa_level() { g_active.store(kUnset, std::memory_order_release); }

const char* isa_name(IsaLevel level) noexcept {
  switch (level) {
    case IsaLevel::scalar: return "scalar";
    case IsaLevel::avx2: return "avx2";
    case IsaLevel::avx512: return "avx512";
  }
  return "unknown";
}

IsaLevel parse_isa(std::string_view name) {
  if (name == "scalar") return IsaLevel::scalar;
  if (name == "avx2") return IsaLevel::avx2;
  if (name == "avx512") return IsaLevel::avx512;
  throw ArgumentError(concat("unknown ISA level '", name, "'; expected scalar, avx2 or avx512"));
}

}  // namespace apexnpu::rt
