# cmake -DLIBRARY=<the runtime built for aarch64> -DOBJDUMP=<aarch64-linux-gnu-objdump>
#       -P no_fused_multiply_add.cmake
# The runtime's results are bit-identical to x86-64's only if no multiply and add are fused on
# aarch64, where gcc contracts a*b+c by default. Kernel files turn it off (build.json); other
# sources rely on holding no contractible arithmetic. Fails naming every function that has a
# fused multiply-add instruction. Prints "SKIPPED: ..." when the library or objdump is missing.
include(${CMAKE_CURRENT_LIST_DIR}/require.cmake)
apexnpu_require_program(objdump ${OBJDUMP} binutils-aarch64-linux-gnu)
apexnpu_require_built(${LIBRARY})
execute_process(COMMAND ${objdump} -d --no-show-raw-insn -C ${LIBRARY}
                OUTPUT_VARIABLE listing RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${objdump} could not read ${LIBRARY}")
endif()
string(REPLACE ";" "," listing "${listing}")
string(REPLACE "\n" ";" lines "${listing}")
set(function "")
set(fused "")
foreach(line IN LISTS lines)
  if(line MATCHES "^[0-9a-f]+ <(.*)>:$")
    set(function "${CMAKE_MATCH_1}")
  elseif(line MATCHES "\t(fmadd|fmsub|fnmadd|fnmsub|fmla|fmls)\t")
    list(APPEND fused "${function}")
  endif()
endforeach()
list(REMOVE_DUPLICATES fused)
list(LENGTH fused count)
if(count GREATER 0)
  list(JOIN fused "\n  " names)
  message(FATAL_ERROR "${count} function(s) of ${LIBRARY} fuse a multiply and an add, which "
          "x86-64's baseline does not (compile them with -ffp-contract=off):\n  ${names}")
endif()
message("no fused multiply-add in ${LIBRARY}")
