# cmake -DPROGRAM=<gtest executable built for ARCH> -DARCH=<aarch64> -DEMULATOR=<qemu-aarch64>
#       -DPACKAGE=<the emulator's Debian package> [-DSHARD=<i> -DSHARDS=<n>]
#       -P run_under_qemu.cmake
# Runs a cross-compiled gtest executable under qemu-user (shard i of n, or whole). Only an ARCH
# run can pass: the file must be an ELF executable for ARCH's machine, and its Architecture
# test (the runtime and uname inside the emulator both say ARCH) must run and pass first.
# Prints "SKIPPED: ..." (the tests' skip expression) when the emulator is not installed or the
# program was not built because its cross compiler is missing.
set(elf_machine_aarch64 "b700")  # EM_AARCH64 = 183, little-endian
if(NOT DEFINED elf_machine_${ARCH})
  message(FATAL_ERROR "run_under_qemu.cmake knows no ELF machine for '${ARCH}'")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/require.cmake)
apexnpu_require_program(emulator ${EMULATOR} ${PACKAGE})
apexnpu_require_built(${PROGRAM})

# ELF header: magic, class 2 (64-bit), data 1 (little-endian) ... e_machine at byte 18.
file(READ ${PROGRAM} header LIMIT 20 HEX)
string(SUBSTRING "${header}" 0 12 ident)
string(SUBSTRING "${header}" 36 4 machine)
if(NOT ident STREQUAL "7f454c460201" OR NOT machine STREQUAL "${elf_machine_${ARCH}}")
  message(FATAL_ERROR "${PROGRAM} is not a 64-bit little-endian ELF for ${ARCH} "
          "(ident ${ident}, machine ${machine}; expected machine ${elf_machine_${ARCH}})")
endif()

set(check Architecture.RuntimeAndMachineAreTheBuildTarget)
execute_process(COMMAND ${emulator} ${PROGRAM} --gtest_filter=${check}
                OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE status)
if(NOT status EQUAL 0 OR NOT out MATCHES "\\[       OK \\] ${check}")
  message(FATAL_ERROR "${PROGRAM} under ${emulator} did not pass ${check}:\n${out}")
endif()
message("${check} passed under ${emulator}: the tests run as ${ARCH}")

# Tests that scale their work down under an emulated CPU look for this.
set(env APEXNPU_TEST_UNDER_EMULATOR=1)
if(DEFINED SHARDS)
  list(APPEND env GTEST_TOTAL_SHARDS=${SHARDS} GTEST_SHARD_INDEX=${SHARD})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env ${env} ${emulator} ${PROGRAM}
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} under ${emulator} failed (exit ${status})")
endif()
