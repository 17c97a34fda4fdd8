# measure (src/bench/, src/cmd/cmd_measure.c): unit tests with independent references, and
# integration tests of the CLI on tiny configs (results validated against schemas/result-v1.json).
# This file is included from tests/CMakeLists.txt: CMAKE_CURRENT_SOURCE_DIR is tests/, the tests are here.
set(MEASURE_TESTS ${CMAKE_CURRENT_LIST_DIR})
instbench_add_unit_test(measure_runner ${MEASURE_TESTS}/measure_runner.c)
instbench_add_unit_test(measure_datapipe ${MEASURE_TESTS}/measure_datapipe.c)
instbench_add_unit_test(measure_rendezvous ${MEASURE_TESTS}/measure_rendezvous.c)
# the host load leaves out the job's own processes on the machine (local ranks of a per-GPU launcher,
# the nodes of a --nnodes job started on one machine)
instbench_add_unit_test(measure_job_procs ${MEASURE_TESTS}/measure_job_procs.c)
# white-box: hands bench measure's parser as cmd_measure does (cmd_measure_value_follows)
instbench_test_internals(measure_job_procs cmd)
set_tests_properties(measure_job_procs PROPERTIES TIMEOUT 60)
instbench_add_unit_test(bench_sysinfo_gpus ${MEASURE_TESTS}/bench_sysinfo_gpus.c)
instbench_add_unit_test(bench_sysinfo_arm ${MEASURE_TESTS}/bench_sysinfo_arm.c)
instbench_add_unit_test(measure_allreduce_timing ${MEASURE_TESTS}/measure_allreduce_timing.c)
instbench_add_unit_test(measure_identity ${MEASURE_TESTS}/measure_identity.c)
instbench_add_unit_test(measure_nccl_net ${MEASURE_TESTS}/measure_nccl_net.c)
instbench_add_unit_test(measure_probe ${MEASURE_TESTS}/measure_probe.c)
# The C tests include tests/lib/check.h, shared by every area (instbench_add_unit_test's include path).
foreach(t measure_runner measure_datapipe measure_rendezvous bench_sysinfo_gpus bench_sysinfo_arm measure_identity
          measure_nccl_net measure_allreduce_timing measure_probe)
  target_include_directories(${t} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
endforeach()

add_executable(measure_stats_tool ${MEASURE_TESTS}/measure_stats_tool.c)
target_link_libraries(measure_stats_tool PRIVATE instbench_core)
add_test(NAME measure_stats
         COMMAND ${Python3_EXECUTABLE} ${MEASURE_TESTS}/measure_stats.py $<TARGET_FILE:measure_stats_tool>)

# CLI tests: each gets its own scratch directory; the schema lives in the source tree.
set(MEASURE_PY_ARGS ${INSTBENCH_BIN} ${CMAKE_SOURCE_DIR}/schemas/result-v1.json)
foreach(t schema timing signal imds imds_hostile flags fingerprint hostload tty price output startup identity dirs sagemaker estimate
    launcher_addr launcher_vars)
  add_test(NAME measure_cli_${t}
           COMMAND ${Python3_EXECUTABLE} ${MEASURE_TESTS}/measure_cli_${t}.py ${MEASURE_PY_ARGS})
  set_tests_properties(measure_cli_${t} PROPERTIES ENVIRONMENT "INSTBENCH_CPU_PEAK_SECONDS=0.05;NO_COLOR=1")
endforeach()

# tool.revision and the table's header against the revision the build recorded (and git's commits)
add_test(NAME measure_cli_revision
         COMMAND ${Python3_EXECUTABLE} ${MEASURE_TESTS}/measure_cli_revision.py ${MEASURE_PY_ARGS} ${CMAKE_SOURCE_DIR}
                 ${INSTBENCH_REVISION_TEXT})
set_tests_properties(measure_cli_revision PROPERTIES ENVIRONMENT "INSTBENCH_CPU_PEAK_SECONDS=0.05;NO_COLOR=1")

instbench_add_unit_test(measure_peak ${MEASURE_TESTS}/measure_peak.c)
set_tests_properties(measure_peak PROPERTIES ENVIRONMENT "INSTBENCH_GPU_PEAK_FLOPS=${CMAKE_SOURCE_DIR}/configs/gpu-peak-flops.json")
add_test(NAME measure_peak_table
         COMMAND ${Python3_EXECUTABLE} ${MEASURE_TESTS}/measure_peak_table.py ${CMAKE_SOURCE_DIR}/configs/gpu-peak-flops.json)
# The schema test's bf16 runs again with oneDNN capped at AVX2 (the emulated bf16 path).
add_test(NAME measure_cli_schema_avx2
         COMMAND ${Python3_EXECUTABLE} ${MEASURE_TESTS}/measure_cli_schema.py ${MEASURE_PY_ARGS})
set_tests_properties(measure_cli_schema_avx2 PROPERTIES ENVIRONMENT
                     "INSTBENCH_CPU_PEAK_SECONDS=0.05;NO_COLOR=1;DNNL_MAX_CPU_ISA=AVX2")
# ~30 s under the sanitizers (timing a real window): the ASan build skips it, the release build runs it.
set_tests_properties(measure_cli_timing PROPERTIES LABELS slow)

# measure's timed checkpoint: a slow disk and a full one through an LD_PRELOAD shim (write() to the
# checkpoint file slowed, statvfs() reporting little room), Ctrl-C inside the checkpoint.
add_library(checkpoint_io_shim SHARED ${MEASURE_TESTS}/checkpoint_io_shim.c)
target_link_libraries(checkpoint_io_shim PRIVATE ${CMAKE_DL_LIBS})
add_test(NAME measure_cli_checkpoint
         COMMAND ${Python3_EXECUTABLE} ${MEASURE_TESTS}/measure_cli_checkpoint.py ${MEASURE_PY_ARGS}
                 $<TARGET_FILE:checkpoint_io_shim>)
set_tests_properties(measure_cli_checkpoint PROPERTIES ENVIRONMENT "INSTBENCH_CPU_PEAK_SECONDS=0.05;NO_COLOR=1")

# Every launcher to a finished two-process run on the CUDA module simulated on the CPU (tests/cuda/cuda.cmake
# builds it in CUDA builds; it is defined before this file, whose folder sorts after it): real
# torchrun (static and --standalone), a PyTorchJob/Volcano pod's variables and Kubeflow Trainer v2's
# PET_*, each with the NCCL id on the port that launcher leaves free; and a real Slurm (munge,
# slurmctld, slurmd started on loopback by the test) running `srun --ntasks=2`.
if(TARGET instbench_cuda_sim)
  add_test(NAME measure_launchers
           COMMAND ${Python3_EXECUTABLE} ${MEASURE_TESTS}/measure_launchers.py ${INSTBENCH_BIN}
                   $<TARGET_FILE:instbench_cuda_sim> ${CMAKE_SOURCE_DIR}/schemas/result-v1.json)
  # release_only: the cudasim kernels' checks are the release build's; the launchers' variables and
  # the rendezvous are host code other tests run under the sanitizers (tests/cuda/cuda.cmake)
  set_tests_properties(measure_launchers PROPERTIES TIMEOUT 900 LABELS release_only)
  add_test(NAME measure_slurm
           COMMAND ${Python3_EXECUTABLE} ${MEASURE_TESTS}/measure_slurm.py ${INSTBENCH_BIN}
                   $<TARGET_FILE:instbench_cuda_sim> ${CMAKE_SOURCE_DIR}/schemas/result-v1.json
                   ${CMAKE_SOURCE_DIR}/docs/usage.md)
  set_tests_properties(measure_slurm PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77 LABELS release_only)
endif()

# communication.allreduce (nccl-tests' algbw/busbw recomputed from the recorded times): in-process
# ranks here, and two processes over the NCCL stand-in where the simulated CUDA module is built.
if(TARGET instbench_cuda_sim)
  add_test(NAME measure_allreduce
           COMMAND ${Python3_EXECUTABLE} ${MEASURE_TESTS}/measure_allreduce.py ${INSTBENCH_BIN}
                   ${CMAKE_SOURCE_DIR}/schemas/result-v1.json $<TARGET_FILE:instbench_cuda_sim>)
else()
  add_test(NAME measure_allreduce
           COMMAND ${Python3_EXECUTABLE} ${MEASURE_TESTS}/measure_allreduce.py ${INSTBENCH_BIN}
                   ${CMAKE_SOURCE_DIR}/schemas/result-v1.json)
endif()
set_tests_properties(measure_allreduce PROPERTIES TIMEOUT 900)
