# CUDA 12 toolchains (issue 25): every kernel file compiled by NVRTC 12.9 + ptxas 12.9 from PyPI's
# wheels for 75;80;86;89;90;100;120, warnings as errors (scripts/ci/check_cuda12_kernels.sh), and shown to
# fail on a kernel with a warning.  Needs no nvcc and no GPU, so every build runs it; it installs
# the wheels into build-venv/cuda12 itself (SKIP offline outside CI).
add_test(NAME cuda12_kernels
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cuda12_kernels_test.py ${CMAKE_SOURCE_DIR})
set_tests_properties(cuda12_kernels PROPERTIES TIMEOUT 900 SKIP_RETURN_CODE 77)
