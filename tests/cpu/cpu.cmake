# The CPU backend (src/cpu/; with comm/local, engine_dp) against independent references: a
# double-precision ViT and finite differences, a learning task, a naive GEMM.  The model's own
# tests (the buffer plan, FLOP counts, `models`) are in tests/model/.
instbench_add_unit_test(engine_gradcheck ${CMAKE_CURRENT_LIST_DIR}/engine_gradcheck.c)
# GCC 12's aarch64 loop vectoriser crashes on its four-sum double reduction (internal compiler error
# in vect_transform_reduction at -O3; Debian 12's gcc-aarch64-linux-gnu, scripts/ci/check_aarch64.sh):
# the loop is not timed, so it stays scalar there.
if(CMAKE_C_COMPILER_ID STREQUAL "GNU" AND CMAKE_C_COMPILER_VERSION VERSION_LESS 13 AND
   CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/engine_gradcheck.c PROPERTIES COMPILE_OPTIONS -fno-tree-loop-vectorize)
endif()
instbench_add_unit_test(engine_dp ${CMAKE_CURRENT_LIST_DIR}/engine_dp.c)
instbench_add_unit_test(engine_learn ${CMAKE_CURRENT_LIST_DIR}/engine_learn.c)
# The CPU peak probe (src/cpu/rate.c) over a recording stand-in of its GEMM layer: the operands it
# times are aligned and filled as the step's are.
instbench_add_unit_test(engine_rate_operands ${CMAKE_CURRENT_LIST_DIR}/engine_rate_operands.c ${CMAKE_SOURCE_DIR}/src/cpu/rate.c)
instbench_test_internals(engine_rate_operands cpu)
target_link_libraries(engine_rate_operands PRIVATE OpenMP::OpenMP_C)

# bf16 GEMMs against a naive double product, and the engine tests again with oneDNN capped at
# AVX2, where it has no bf16 matmul: a CPU with bf16 hardware proves the emulated path too.
instbench_add_unit_test(engine_gemm_bf16 ${CMAKE_CURRENT_LIST_DIR}/engine_gemm_bf16.c)
instbench_test_internals(engine_gemm_bf16 cpu)   # white-box: the CPU GEMMs below the backend (cpu/ops.h)
foreach(t engine_gemm_bf16 engine_gradcheck engine_learn)
  add_test(NAME ${t}_avx2 COMMAND ${t} WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
  set_tests_properties(${t}_avx2 PROPERTIES ENVIRONMENT "DNNL_MAX_CPU_ISA=AVX2")
endforeach()
