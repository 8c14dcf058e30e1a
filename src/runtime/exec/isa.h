#pragma once
// Instruction-set levels and the kernel-file convention.
//
// The levels are those of the architecture being compiled for, listed once in
// exec/isa_levels.h (x86-64: scalar = 0, avx2 = 1 (AVX2 + FMA + F16C), avx512 = 2 (AVX-512
// F/BW/VL/DQ + the AVX2 set); aarch64: scalar = 0, neon = 1 (ARMv8-A Advanced SIMD with its fp16
// conversions)); everything below is generated from that list.
//
// A file named `*.kernels.cpp` is compiled once per level with -DAPEXNPU_ISA_LEVEL=<n> and that
// level's flags (build.json). It puts its symbols in `namespace apexnpu::rt::APEXNPU_ISA_NS`,
// which expands to isa_<n> (isa_0, isa_1, ...), so the copies link side by side:
//
//   // adam.kernels.cpp
//   #include "exec/isa.h"
//   namespace apexnpu::rt::APEXNPU_ISA_NS {
//   void adam_chunk(float* p, const float* g, std::size_t n) { for (...) ... }  // plain loops
//   }
//
//   // adam.cpp (compiled once, baseline flags): declare the variants, pick one at run time.
//   namespace apexnpu::rt {
//   APEXNPU_ISA_DECLARE(void, adam_chunk, (float* p, const float* g, std::size_t n))
//   void adam(...) { auto* fn = APEXNPU_ISA_SELECT(adam_chunk); parallel_for(..., fn ...); }
//   }
//
// The active level is the best the CPU supports, unless the environment variable
// APEXNPU_ISA=<level name> (read once, on first use) or set_isa_level() forces another.
// Forcing a level the CPU lacks is an error. The scalar level is compiled for the baseline ISA
// with -fno-tree-vectorize (build.json), so plain loops stay scalar; the kernels' V16
// (exec/vec16.h) uses gcc's generic vectors there, which the compiler lowers to the baseline's
// SIMD (SSE2 on x86-64, NEON on aarch64) or to scalar code, element-wise IEEE operations
// either way. Code for one level is chosen with isa_levels.h's APEXNPU_ISA_USES_<LEVEL>.
//
// Numerics across levels: every kernel file is compiled with -ffp-contract=off (build.json), so
// no level contracts a*b+c into an FMA behind the kernel's back; a kernel written with the same
// operations in the same order gives bit-identical results at every level.
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "exec/isa_levels.h"

#define APEXNPU_ISA_CAT2(a, b) a##b
#define APEXNPU_ISA_CAT(a, b) APEXNPU_ISA_CAT2(a, b)
// The namespace of a level's kernel variants.
#define APEXNPU_ISA_NS_OF(number) APEXNPU_ISA_CAT(isa_, number)

namespace apexnpu::rt {

#define APEXNPU_ISA_ENUMERATOR(name, number, ...) name = number,
enum class IsaLevel : int { APEXNPU_ISA_LEVELS(APEXNPU_ISA_ENUMERATOR) };
#undef APEXNPU_ISA_ENUMERATOR

#define APEXNPU_ISA_ONE(...) +1
inline constexpr int kIsaLevelCount = 0 APEXNPU_ISA_LEVELS(APEXNPU_ISA_ONE);
#undef APEXNPU_ISA_ONE

// Every level, in order (for loops over them: tests, benchmarks).
#define APEXNPU_ISA_VALUE(name, ...) IsaLevel::name,
inline constexpr IsaLevel kIsaLevels[] = {APEXNPU_ISA_LEVELS(APEXNPU_ISA_VALUE)};
#undef APEXNPU_ISA_VALUE

// The build.json key of the architecture these levels belong to ("x86_64", "aarch64").
inline constexpr std::string_view kIsaArchitecture = APEXNPU_ISA_ARCHITECTURE;

// Levels index the variants (select()), so they must be numbered 0, 1, ... in list order.
#define APEXNPU_ISA_NUMBER(name, number, ...) number,
static_assert(
    [] {
      const int numbers[] = {APEXNPU_ISA_LEVELS(APEXNPU_ISA_NUMBER)};
      for (int i = 0; i < kIsaLevelCount; ++i)
        if (numbers[i] != i) return false;
      return true;
    }(),
    "exec/isa_levels.h must number its levels 0, 1, 2, ... in order");
#undef APEXNPU_ISA_NUMBER

// Whether this CPU (and OS) can run the given level.
bool isa_supported(IsaLevel level) noexcept;
// The best level this CPU supports.
IsaLevel best_supported_isa() noexcept;
// The level kernels dispatch to now. Throws Error if APEXNPU_ISA is invalid or unsupported.
IsaLevel active_isa();
// Forces a level for the whole process; throws ArgumentError if the CPU does not support it.
void set_isa_level(IsaLevel level);
// Back to the default (APEXNPU_ISA if set, else the best supported level).
void reset_isa_level();

// The default level for a value of APEXNPU_ISA (null or empty: best supported); throws Error
// naming the variable if the value is unknown or the CPU lacks that level.
IsaLevel isa_level_from_env(const char* value);

const char* isa_name(IsaLevel level) noexcept;
// A level's name ("scalar", "avx2", ...) -> level; throws ArgumentError otherwise.
IsaLevel parse_isa(std::string_view name);

// Picks the variant for the active level: one argument per level, in level order.
template <typename Fn, typename... Higher>
requires(sizeof...(Higher) + 1 == kIsaLevelCount && (std::is_same_v<Fn, Higher> && ...)) Fn
    select(Fn baseline, Higher... higher) {
  const Fn variants[] = {baseline, higher...};
  return variants[static_cast<int>(active_isa())];
}

// Sets a level for a scope and restores the previous one (tests, benchmarks).
class ScopedIsaLevel {
 public:
  explicit ScopedIsaLevel(IsaLevel level) : previous_(active_isa()) { set_isa_level(level); }
  ~ScopedIsaLevel() { set_isa_level(previous_); }
  ScopedIsaLevel(const ScopedIsaLevel&) = delete;
  ScopedIsaLevel& operator=(const ScopedIsaLevel&) = delete;

 private:
  IsaLevel previous_;
};

}  // namespace apexnpu::rt

// Declares `ret name params` in every level's namespace (use inside namespace apexnpu::rt).
#define APEXNPU_ISA_DECLARE_AT(level, number, targeted, flags, ret, name, params) \
  namespace APEXNPU_ISA_NS_OF(number) {                                           \
    ret name params;                                                              \
  }
#define APEXNPU_ISA_DECLARE(ret, name, params) APEXNPU_ISA_LEVELS(APEXNPU_ISA_DECLARE_AT, ret, name, params)

// The variant of `name` (declared with APEXNPU_ISA_DECLARE) for the active level.
#define APEXNPU_ISA_VARIANT_AT(level, number, targeted, flags, name) , &APEXNPU_ISA_NS_OF(number)::name
#define APEXNPU_ISA_SELECT(name) \
  ::apexnpu::rt::select(APEXNPU_ISA_SELECT_ARGS(APEXNPU_ISA_LEVELS(APEXNPU_ISA_VARIANT_AT, name)))
// Drops the leading comma of the variant list.
#define APEXNPU_ISA_SELECT_ARGS(...) APEXNPU_ISA_DROP_FIRST(__VA_ARGS__)
#define APEXNPU_ISA_DROP_FIRST(empty, ...) __VA_ARGS__

#if defined(APEXNPU_ISA_LEVEL)
// In a kernel file: the namespace of the level being compiled, checked against the list.
#define APEXNPU_ISA_NS APEXNPU_ISA_NS_OF(APEXNPU_ISA_LEVEL)
#define APEXNPU_ISA_IS(level, number, ...) APEXNPU_ISA_LEVEL == number ||
static_assert(APEXNPU_ISA_LEVELS(APEXNPU_ISA_IS) false,
              "APEXNPU_ISA_LEVEL is not a level of this architecture (exec/isa_levels.h)");
#undef APEXNPU_ISA_IS
#define APEXNPU_ISA_CHECK_TARGETED(level, number, targeted, flags, ...) \
  static_assert(APEXNPU_ISA_LEVEL != number || targeted,                \
                "APEXNPU_ISA_LEVEL=" #number " (" #level ") needs " flags " (see build.json)");
APEXNPU_ISA_LEVELS(APEXNPU_ISA_CHECK_TARGETED)
#undef APEXNPU_ISA_CHECK_TARGETED
#endif
