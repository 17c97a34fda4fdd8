# The static audit of the built CUDA module (scripts/ci/audit_cuda_module.py: shared memory, registers
# x block size, spills, compute_90 PTX, DT_NEEDED), on the
# module this build made, and shown to report each kind of finding.  cuobjdump comes from PyPI
# (scripts/ci/cuda_tools_env.sh audit; SKIP offline outside CI).
if(TARGET instbench_cuda)
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    set(_audit_nccl 1)
  else()
    set(_audit_nccl 0)
  endif()
  add_test(NAME cuda_audit
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cuda_audit_test.py ${CMAKE_SOURCE_DIR}
                   $<TARGET_FILE:instbench_cuda> ${CUDAToolkit_VERSION_MAJOR} ${_audit_nccl})
  set_tests_properties(cuda_audit PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77)
endif()
