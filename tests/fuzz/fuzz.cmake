# libFuzzer targets: every tests/fuzz/fuzz_*.c becomes a fuzzer linked to the modules that parse
# what comes from outside (INSTBENCH_FUZZED_MODULES) when configured with clang and
# -DINSTBENCH_FUZZ=ON; scripts/ci/run_fuzzers.sh builds and runs each for a bounded time.  A file
# only needs LLVMFuzzerTestOneInput; a fuzzer of another module adds that module to the list.
# Not instbench_core: the commands, bench and comm, which no fuzzer calls, would be compiled with
# the fuzzer's instrumentation for nothing (the fuzz build: 93 CPU seconds, 128 with them).  An
# area that defines its own target of the same name (e.g. with extra sources) keeps it: the glob
# runs last and skips those.  (INSTBENCH_FUZZ is declared with the other options in the top-level
# CMakeLists.txt.)
set(INSTBENCH_FUZZED_MODULES instbench_aws instbench_aws_services instbench_prices instbench_output instbench_rank
    instbench_sweep instbench_verify)

function(instbench_add_globbed_fuzzers)
  file(GLOB fuzzers CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_*.c)
  foreach(src ${fuzzers})
    get_filename_component(name ${src} NAME_WE)
    if(TARGET ${name})
      continue()
    endif()
    add_executable(${name} ${src})
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(${name} PRIVATE ${INSTBENCH_FUZZED_MODULES})
    # the AWS parsers below the client's API (error bodies, config files) are fuzzed directly
    instbench_test_internals(${name} aws)
  endforeach()
endfunction()

if(INSTBENCH_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "INSTBENCH_FUZZ=ON needs clang: configure with -DCMAKE_C_COMPILER=clang")
  endif()
  # Coverage instrumentation for the library too, or the fuzzer is blind inside the parsers.
  foreach(module ${INSTBENCH_MODULES})
    target_compile_options(${module} PRIVATE -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer)
  endforeach()
  target_link_options(instbench_core INTERFACE -fsanitize=address,undefined)
  if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.19)
    cmake_language(DEFER CALL instbench_add_globbed_fuzzers)
  else()
    instbench_add_globbed_fuzzers()
  endif()
endif()
