# Included by ctest, not by CMake (tests/CMakeLists.txt leaves it out of the areas): each test
# starts from the caller's environment less what would make its outcome depend on who runs it, a
# developer's AWS_PROFILE, AWS_REGION, AWS_ENDPOINT_URL or INSTBENCH_CUDA_MODULE, or a Slurm
# allocation's SLURM_* (tests/README.md).  tests/CMakeLists.txt writes build/tests/caller-env/,
# whose CTestTestfile.cmake ctest reads after the tests' own and which calls
# instbench_scrub_caller_env() for every test; scripts/ci/one_ctest.py's queue does the same.  It
# runs each time ctest reads the tests, in ctest's own environment, so whatever the caller has set
# there is what is taken away, by name: a CMake property cannot unset by pattern.
#
# Taken away:
#   AWS_*                     credentials, profiles, region, endpoints, config files, CA bundle,
#                             IMDS settings: instbench reads them, and so does botocore, the tests'
#                             reference for request shapes
#   INSTBENCH_*               instbench's own settings (the CUDA module, probe, peak, back-off...)
#   SLURM_*, PET_*, TORCHELASTIC_*, RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK,
#   MASTER_ADDR, MASTER_PORT  the launchers' variables measure reads to find its ranks
# Kept: what the test sets itself (its ENVIRONMENT property, passed as the function's further
# arguments), and the settings a caller gives the tests rather than instbench:
#   INSTBENCH_MOTO_VENV       moto's virtual environment (tests/fakes/moto_server.py)
#   INSTBENCH_SKIP_CUDA12     the CUDA 12 checks may skip where CI is offline on purpose
#   INSTBENCH_SKIP_AARCH64    likewise for the arm64 check
# A test that wants one of the variables taken away sets it itself: ENVIRONMENT in its .cmake, or
# its own environment for the commands it runs (what tests/lib/testlib.py's offline_env() does).
# ENVIRONMENT_MODIFICATION is this file's: tests/CMakeLists.txt refuses a test that sets it.

# An older ctest ignores ENVIRONMENT_MODIFICATION without a word, so every test would get the
# caller's variables after all: it runs no test.  (A ctest older than the CMake that configured the
# build: another one first on PATH.)  INSTBENCH_CTEST: that CMake's ctest, set by the file
# tests/CMakeLists.txt generates to include this one (scripts/ci/one_ctest.py's queue does not).
if(CMAKE_VERSION VERSION_LESS 3.22)
  if(INSTBENCH_CTEST)
    set(_instbench_newer "run ${INSTBENCH_CTEST}, the ctest of the CMake that configured this build")
  else()
    set(_instbench_newer "run a ctest of 3.22 or later (python3 -m pip install 'cmake>=3.22' has one)")
  endif()
  message(FATAL_ERROR "This is ctest ${CMAKE_VERSION}; the tests need ctest 3.22 or later, which applies the "
          "ENVIRONMENT_MODIFICATION that keeps the caller's AWS_*/INSTBENCH_* variables from each test "
          "(tests/lib/caller_env.cmake): ${_instbench_newer}.")
endif()

# `env`, once per ctest run: names at the start of a line, before the first '=' (a value's own
# lines may add a name that is not one; unsetting it changes nothing)
execute_process(COMMAND env OUTPUT_VARIABLE _instbench_env RESULT_VARIABLE _instbench_env_rc)
if(NOT _instbench_env_rc EQUAL 0)
  message(FATAL_ERROR "tests/lib/caller_env.cmake: `env` failed (${_instbench_env_rc}): the tests' environment cannot be cleaned")
endif()
string(REGEX MATCHALL "(^|\n)[A-Za-z_][A-Za-z0-9_]*=" _instbench_env "${_instbench_env}")
set(_instbench_scrubbed)
foreach(_n ${_instbench_env})
  string(REGEX REPLACE "^\n?([A-Za-z0-9_]+)=$" "\\1" _n "${_n}")
  if(_n MATCHES "^(AWS|INSTBENCH|SLURM|PET|TORCHELASTIC)_|^(RANK|WORLD_SIZE|LOCAL_RANK|LOCAL_WORLD_SIZE|GROUP_RANK|MASTER_ADDR|MASTER_PORT)$"
     AND NOT _n MATCHES "^INSTBENCH_(MOTO_VENV|SKIP_CUDA12|SKIP_AARCH64)$")
    list(APPEND _instbench_scrubbed "${_n}")
  endif()
endforeach()
list(REMOVE_DUPLICATES _instbench_scrubbed)

# TEST's ENVIRONMENT_MODIFICATION: each variable above unset, but for those named after TEST (the
# ones its ENVIRONMENT sets)
function(instbench_scrub_caller_env test)
  set(mods)
  foreach(n ${_instbench_scrubbed})
    list(FIND ARGN "${n}" own)
    if(own EQUAL -1)
      list(APPEND mods "${n}=unset:")
    endif()
  endforeach()
  set_tests_properties("${test}" PROPERTIES ENVIRONMENT_MODIFICATION "${mods}")
endfunction()
