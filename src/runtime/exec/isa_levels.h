#pragma once
// The ISA levels of the architecture being compiled for: the one list that exec/isa.h generates
// the dispatch from (IsaLevel, names, APEXNPU_ISA_DECLARE / SELECT, the kernel namespaces and
// their flag checks) and exec/cpu_probe.h the CPU probes. build.json's "isa_levels" entry for
// the same architecture lists the same levels with their flags (tests/runtime check both agree).
//
// APEXNPU_ISA_LEVELS(X, ...) expands X(name, number, targeted, flags, ...) once per level, in
// order, numbers 0, 1, 2, ... (level 0 is the architecture's baseline, always supported):
//   name      the level's name: APEXNPU_ISA=<name>, build.json's "name"
//   number    -DAPEXNPU_ISA_LEVEL=<number>, build.json's "level"
//   targeted  1 when the compiler's flags enable the level's features, else 0
//   flags     the flags that enable them, for the error a kernel file compiled without them gets
//
// Each architecture also defines, in kernel files, APEXNPU_ISA_USES_<LEVEL> (1 when the file is
// compiled at that level or a higher one): exec/vec16.h and exec/half_simd.h pick their code with
// these, never with level numbers, so each architecture selects its own; a macro of another
// architecture is undefined, which #if reads as 0.
//
// A new level: a line here, its USES macro, its probe cpu::runs_<name>() in the architecture's
// exec/cpu_*.cpp, and its entry in build.json.
#if defined(__x86_64__)

#define APEXNPU_ISA_ARCHITECTURE "x86_64"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define APEXNPU_ISA_TARGETS_AVX2 1
#else
#define APEXNPU_ISA_TARGETS_AVX2 0
#endif
#if APEXNPU_ISA_TARGETS_AVX2 && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    defined(__AVX512DQ__)
#define APEXNPU_ISA_TARGETS_AVX512 1
#else
#define APEXNPU_ISA_TARGETS_AVX512 0
#endif

#define APEXNPU_ISA_LEVELS(X, ...)                                                                           \
  X(scalar, 0, 1, "", __VA_ARGS__)                                                                           \
  X(avx2, 1, APEXNPU_ISA_TARGETS_AVX2, "-mavx2 -mfma -mf16c", __VA_ARGS__)                                   \
  X(avx512, 2, APEXNPU_ISA_TARGETS_AVX512, "-mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx2 -mfma -mf16c", \
    __VA_ARGS__)

#if defined(APEXNPU_ISA_LEVEL)
#define APEXNPU_ISA_USES_AVX2 (APEXNPU_ISA_LEVEL >= 1)
#define APEXNPU_ISA_USES_AVX512 (APEXNPU_ISA_LEVEL >= 2)
#endif

// gcc 12 reports -Wmaybe-uninitialized inside every inlined AVX-512 intrinsic (the headers'
// `_mm512_undefined_ps()` idiom); a false positive, silenced for kernel files built for AVX-512.
#if defined(APEXNPU_ISA_LEVEL) && APEXNPU_ISA_TARGETS_AVX512
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#elif defined(__aarch64__)

#define APEXNPU_ISA_ARCHITECTURE "aarch64"

// Advanced SIMD (NEON) and its fp16 <-> fp32 conversions (FCVTL/FCVTN) are part of ARMv8-A, so
// the neon level needs no flag beyond the compiler's default; scalar is the same baseline with
// the vectoriser off (build.json). ARMv8.2-A's FP16 is no level: it adds half-precision
// arithmetic, which the kernels never do (they compute in fp32); built for it, they are the
// same instructions.
#if defined(__ARM_NEON) && defined(__ARM_FP) && (__ARM_FP & 0x2)
#define APEXNPU_ISA_TARGETS_NEON 1
#else
#define APEXNPU_ISA_TARGETS_NEON 0
#endif

#define APEXNPU_ISA_LEVELS(X, ...) \
  X(scalar, 0, 1, "", __VA_ARGS__) \
  X(neon, 1, APEXNPU_ISA_TARGETS_NEON, "-march=armv8-a (gcc's default)", __VA_ARGS__)

#if defined(APEXNPU_ISA_LEVEL)
#define APEXNPU_ISA_USES_NEON (APEXNPU_ISA_LEVEL >= 1)
#endif

#else
#error "exec/isa_levels.h has no ISA levels for this architecture (add them here and in build.json)"
#endif
