#pragma once
// Instruction-set levels and the kernel-file convention.
//
// Levels match src/runtime/build.json: scalar = 0, avx2 = 1 (AVX2 + FMA + F16C),
// avx512 = 2 (AVX-512 F/BW/VL/DQ + the AVX2 set).
//
// A file named `*.kernels.cpp` is compiled once per level with -DAPEXNPU_ISA_LEVEL=<n> and that
// level's flags. It puts its symbols in `namespace apexnpu::rt::APEXNPU_ISA_NS`, which expands
// to isa_scalar / isa_avx2 / isa_avx512, so the three copies link side by side:
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
// APEXNPU_ISA=scalar|avx2|avx512 (read once, on first use) or set_isa_level() forces another.
// Forcing a level the CPU lacks is an error. The scalar level is compiled for the baseline ISA
// with -fno-tree-vectorize (build.json), so plain loops stay scalar; the optimizer kernels' V16
// (exec/vec16.h) uses gcc's generic vectors there, which the compiler lowers to the baseline's
// SIMD (SSE2 on x86-64) or to scalar code, element-wise IEEE operations either way.
//
// Numerics across levels: every kernel file is compiled with -ffp-contract=off (build.json), so
// no level contracts a*b+c into an FMA behind the kernel's back; a kernel written with the same
// operations in the same order gives bit-identical results at every level.
#include <cstdint>
#include <string_view>

namespace apexnpu::rt {

enum class IsaLevel : int { scalar = 0, avx2 = 1, avx512 = 2 };
inline constexpr int kIsaLevelCount = 3;

// Whether this CPU (and OS, via xgetbv) can run the given level.
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
// "scalar" / "avx2" / "avx512" -> level; throws ArgumentError otherwise.
IsaLevel parse_isa(std::string_view name);

// Picks the variant for the active level.
template <typename Fn>
Fn select(Fn scalar, Fn avx2, Fn avx512) {
  switch (active_isa()) {
    case IsaLevel::avx512: return avx512;
    case IsaLevel::avx2: return avx2;
    case IsaLevel::scalar: break;
  }
  return scalar;
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

// Declares `ret name params` in the three ISA namespaces (use inside namespace apexnpu::rt).
#define APEXNPU_ISA_DECLARE(ret, name, params) \
  namespace isa_scalar { ret name params; }    \
  namespace isa_avx2 { ret name params; }      \
  namespace isa_avx512 { ret name params; }

// The variant of `name` (declared with APEXNPU_ISA_DECLARE) for the active level.
#define APEXNPU_ISA_SELECT(name) \
  ::apexnpu::rt::select(&isa_scalar::name, &isa_avx2::name, &isa_avx512::name)

#if defined(APEXNPU_ISA_LEVEL)
#if APEXNPU_ISA_LEVEL == 0
#define APEXNPU_ISA_NS isa_scalar
#elif APEXNPU_ISA_LEVEL == 1
#define APEXNPU_ISA_NS isa_avx2
#if !defined(__AVX2__) || !defined(__FMA__) || !defined(__F16C__)
#error "APEXNPU_ISA_LEVEL=1 needs -mavx2 -mfma -mf16c (see build.json)"
#endif
#elif APEXNPU_ISA_LEVEL == 2
#define APEXNPU_ISA_NS isa_avx512
#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) || !defined(__AVX512DQ__)
#error "APEXNPU_ISA_LEVEL=2 needs -mavx512f -mavx512bw -mavx512vl -mavx512dq (see build.json)"
#endif
// gcc 12 reports -Wmaybe-uninitialized inside every inlined AVX-512 intrinsic (the headers'
// `_mm512_undefined_ps()` idiom); a false positive, silenced for avx512 kernel files only.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#else
#error "APEXNPU_ISA_LEVEL must be 0, 1 or 2"
#endif
#endif
