# cmake -DARCH=<CMAKE_SYSTEM_PROCESSOR> -DCOMPILER=<c++ compiler> -DBINARY_DIR=<dir>
#       [-DPACKAGE=<Debian package of the compiler>] [-DGENERATOR=<generator>]
#       -P compile_runtime.cmake
# Configures tests/cross (the runtime and its tests) for ARCH with COMPILER and builds it. Prints
# "SKIPPED: ..." (the test's skip expression) when COMPILER is not installed, leaving no
# earlier build behind for the tests that run it.
include(${CMAKE_CURRENT_LIST_DIR}/require.cmake)
file(REMOVE_RECURSE ${BINARY_DIR})
apexnpu_require_program(compiler_path ${COMPILER} "${PACKAGE}")
if(NOT GENERATOR)
  set(GENERATOR Ninja)
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${CMAKE_CURRENT_LIST_DIR} -B ${BINARY_DIR} -G ${GENERATOR}
          -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=${ARCH}
          -DCMAKE_CXX_COMPILER=${compiler_path} -DCMAKE_BUILD_TYPE=Release
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "configuring the runtime for ${ARCH} failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BINARY_DIR} RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "compiling the runtime for ${ARCH} with ${compiler_path} failed")
endif()
message("compiled the runtime, print_isa_levels and runtime_tests for ${ARCH} with ${compiler_path}")
