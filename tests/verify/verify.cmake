# instbench verify and the safetensors reader/writer (verification against timm).
# Fixtures tests/data/ref_*.safetensors were made by scripts/data/make_reference.py from timm 0.9.16
# (tests/verify/verify_make_fixtures.sh regenerates them): configs a (Adam) and b (AdamW), fp32 and bf16.

instbench_add_unit_test(verify_safetensors ${CMAKE_CURRENT_LIST_DIR}/verify_safetensors.c
                        ${CMAKE_CURRENT_LIST_DIR}/safetensors_writer.c)
instbench_add_unit_test(verify_metrics ${CMAKE_CURRENT_LIST_DIR}/verify_metrics.c)

# verify PASSes on every committed timm fixture at the precision it was made in.
foreach(ref a_adam_fp32 a_adam_bf16 b_adamw_fp32 b_adamw_bf16)
  add_test(NAME verify_ref_${ref}
           COMMAND ${INSTBENCH_BIN} verify --reference ${INSTBENCH_TEST_DATA}/ref_${ref}.safetensors --format table)
  set_tests_properties(verify_ref_${ref} PROPERTIES PASS_REGULAR_EXPRESSION "PASS: ")
  # again with oneDNN capped at AVX2 (no bf16 matmul there: the emulated bf16 path)
  add_test(NAME verify_ref_${ref}_avx2
           COMMAND ${INSTBENCH_BIN} verify --reference ${INSTBENCH_TEST_DATA}/ref_${ref}.safetensors --format table)
  set_tests_properties(verify_ref_${ref}_avx2 PROPERTIES PASS_REGULAR_EXPRESSION "PASS: "
                       ENVIRONMENT "DNNL_MAX_CPU_ISA=AVX2")
endforeach()

# Copies corrupted at test time must FAIL (exit 1) on exactly what was corrupted; bad files and
# flags are refused with a message.
foreach(case json grad losses weight)
  foreach(ref a_adam_fp32 b_adamw_bf16)
    add_test(NAME verify_case_${case}_${ref}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/verify_cases.py ${INSTBENCH_BIN}
                     ${INSTBENCH_TEST_DATA}/ref_${ref}.safetensors ${case})
  endforeach()
endforeach()
foreach(case missing shape extra labels claims truncated usage)
  add_test(NAME verify_case_${case}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/verify_cases.py ${INSTBENCH_BIN}
                   ${INSTBENCH_TEST_DATA}/ref_b_adamw_fp32.safetensors ${case})
endforeach()

# The reference generator itself, run now from timm on a tiny config unlike the fixtures.
foreach(prec fp32 bf16)
  add_test(NAME verify_regen_${prec}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/verify_regen.py ${INSTBENCH_BIN} ${prec})
endforeach()

# The safetensors reader's fuzzer (tests/fuzz/fuzz_safetensors.c, run through its .sh) is one of
# the tests/fuzz targets tests/fuzz/fuzz.cmake builds.
