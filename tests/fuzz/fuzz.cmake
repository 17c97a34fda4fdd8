# libFuzzer targets: every tests/fuzz/fuzz_*.c becomes a fuzzer linked to the modules that parse
# what comes from outside (INSTBENCH_FUZZED_MODULES) when configured with clang and
# -DINSTBENCH_FUZZ=ON; scripts/ci/run_fuzzers.sh builds and runs each for a bounded time.  A file
# only needs LLVMFuzzerTestOneInput; a fuzzer of another module adds that module to the list.
# Not instbench_core: the commands, bench and comm would be compiled with the fuzzer's
# instrumentation for every fuzzer (the fuzz build: 93 CPU seconds, 128 with them).  A fuzzer that
# needs more than the list, or less, is declared below with instbench_fuzzer (bench's parsers as
# the single files that hold them, comm whole); the glob runs last and skips those.  (INSTBENCH_FUZZ is declared with the other options in the top-level
# CMakeLists.txt.)
set(INSTBENCH_FUZZED_MODULES instbench_aws instbench_aws_services instbench_prices instbench_output instbench_rank
    instbench_sweep instbench_verify)

# One fuzzer, tests/fuzz/NAME.c, with SOURCES compiled in, linked to LIBS, seeing the private
# headers of the modules in INTERNALS.
function(instbench_fuzzer name)
  cmake_parse_arguments(F "" "" "SOURCES;LIBS;INTERNALS" ${ARGN})
  add_executable(${name} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/${name}.c ${F_SOURCES})
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(${name} PRIVATE ${F_LIBS})
  instbench_test_internals(${name} ${F_INTERNALS})
endfunction()

function(instbench_add_globbed_fuzzers)
  file(GLOB fuzzers CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_*.c)
  foreach(src ${fuzzers})
    get_filename_component(name ${src} NAME_WE)
    if(TARGET ${name})
      continue()
    endif()
    # the AWS parsers below the client's API (error bodies, config files) are fuzzed directly
    instbench_fuzzer(${name} LIBS ${INSTBENCH_FUZZED_MODULES} INTERNALS aws)
  endforeach()
endfunction()

if(INSTBENCH_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "INSTBENCH_FUZZ=ON needs clang: configure with -DCMAKE_C_COMPILER=clang")
  endif()
  # Coverage instrumentation for the library too, or the fuzzer is blind inside the parsers.  Each
  # module carries the runtime its objects call (ASan's, which holds the coverage callbacks too), so
  # every program that links one links (instbench, the unit tests), and `cmake --build` of a fuzz
  # build whole succeeds, not only the fuzzers run_fuzzers.sh names.
  # -Wno-pass-failed: the CPU engine's `#pragma omp simd` reductions (src/cpu/attention.c,
  # layernorm.c) are not vectorised under this instrumentation, and clang says so for each one; the
  # release build vectorises them, and nothing here is about speed.
  foreach(module ${INSTBENCH_MODULES})
    target_compile_options(${module} PRIVATE -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                           -Wno-pass-failed)
    target_link_options(${module} INTERFACE -fsanitize=address,undefined)
  endforeach()
  # bench and comm are fuzzed through what their parsers need alone: comm whole (6 small files),
  # of bench the one file that parses (bench's dependencies reach the CPU backend and oneDNN)
  instbench_fuzzer(fuzz_liveness LIBS instbench_comm INTERNALS comm)
  instbench_fuzzer(fuzz_rendezvous_env SOURCES ${CMAKE_SOURCE_DIR}/src/bench/rendezvous.c LIBS instbench_aws)
  instbench_fuzzer(fuzz_sagemaker SOURCES ${CMAKE_SOURCE_DIR}/src/bench/sagemaker.c LIBS instbench_util)
  if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.19)
    cmake_language(DEFER CALL instbench_add_globbed_fuzzers)
  else()
    instbench_add_globbed_fuzzers()
  endif()
endif()

# A fuzz build builds whole, not only the fuzzers run_fuzzers.sh names: every program linking an
# instrumented module links the sanitizer runtime, and no shared module links one (the CUDA module
# asked for is left out: CMakeLists.txt); a configure and the link lines it gives, no compile.  release_only: the check configures a build of its own, whichever build runs it.
add_test(NAME fuzz_build_links COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/fuzz_build_links.py
         ${CMAKE_COMMAND} ${CMAKE_SOURCE_DIR})
set_tests_properties(fuzz_build_links PROPERTIES SKIP_RETURN_CODE 77 LABELS release_only)
