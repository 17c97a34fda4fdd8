# The tests' own harness (tests/lib/, included by tests/CMakeLists.txt).
# No test depends on its caller's environment (lib/caller_env.cmake): every test's AWS_*,
# INSTBENCH_*, Slurm and torchrun variables unset but its own, and tests that failed under a
# developer's AWS set-up (the CUDA module, botocore's profile and region) pass under one.
add_test(NAME caller_env
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/caller_env_check.py ${CMAKE_CTEST_COMMAND}
                 ${CMAKE_CURRENT_BINARY_DIR} cli_version rank_placement prices_markets_plans s3_presign_botocore)
