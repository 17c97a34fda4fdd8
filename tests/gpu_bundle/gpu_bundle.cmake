# scripts/gpu/gpu_bundle.sh: the folder the first GPU machine runs (no registry, no -dev packages there).
# Packs this CUDA build (--no-build) and runs its binary with only the bundle's libraries on
# LD_LIBRARY_PATH: every library ldd or the loader resolves is the bundle's, glibc's or CUDA's,
# verify and prices run, the cuda backend names the missing driver, gpu_check.sh runs from it;
# --baseline REV unpacks REV with its REVISION (cmake and nvcc stand-ins build it).
if(TARGET instbench_cuda)
  add_test(NAME gpu_bundle
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/gpu_bundle_test.py ${CMAKE_SOURCE_DIR}
                   ${CMAKE_BINARY_DIR})
  set_tests_properties(gpu_bundle PROPERTIES TIMEOUT 300)
endif()
# scripts/gpu/kernel_classes.py (the per-kernel-class side-by-side of a GPU run) on traces made by the test
add_test(NAME kernel_classes
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/kernel_classes_test.py
                 ${CMAKE_SOURCE_DIR}/scripts/gpu/kernel_classes.py)
set_tests_properties(kernel_classes PROPERTIES TIMEOUT 120)
# docs/gpu-runs/README.md, the index of the GPU runs, is current and says what the runs' files say
add_test(NAME gpu_runs_index
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/gpu_runs_index_test.py ${CMAKE_SOURCE_DIR})
