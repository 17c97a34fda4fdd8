# CUDA backend area.  That the CUDA sources compile and link for every architecture is the build
# itself (CUDA builds); their numerics are checked on a GPU machine by scripts/gpu/gpu_check.sh
# (instbench verify --backend cuda --compare-backend cpu against the timm fixtures).  The TCP
# rendezvous and the liveness channel (src/comm/) are tested in tests/comm/.
# The test programs and scripts are here (tests/cuda/); the stand-ins they link (the CUDA runtime,
# cuBLASLt, cuDNN, NCCL, the launchers, cudasim) are in tests/fakes/.  The programs run from tests/
# (CMAKE_CURRENT_SOURCE_DIR: this file is included from tests/CMakeLists.txt), where they open the
# fixtures as data/ref_*.safetensors.
set(_cuda_tests ${CMAKE_CURRENT_LIST_DIR})

# instbench verify --compare-backend (the CUDA-vs-CPU comparison), exercised as cpu vs cpu.
add_test(NAME cuda_verify_compare
         COMMAND ${Python3_EXECUTABLE} ${_cuda_tests}/cuda_verify_compare.py ${INSTBENCH_BIN}
                 ${INSTBENCH_TEST_DATA}/ref_a_adam_bf16.safetensors)

# scripts/bench/bench_gpu_vs_torch.sh (the table that decides issue 37 on a lent GPU) over
# stand-ins of instbench and PyTorch's step: its ratios, and which failing run fails it.
add_test(NAME bench_gpu_vs_torch_sim
         COMMAND ${Python3_EXECUTABLE} ${_cuda_tests}/bench_gpu_vs_torch_sim.py ${CMAKE_SOURCE_DIR})

# scripts/gpu/gpu_import.py: a session's returned files filed as docs/gpu-runs/<date>-<gpu>/
add_test(NAME gpu_import COMMAND ${Python3_EXECUTABLE} ${_cuda_tests}/gpu_import_test.py ${CMAKE_SOURCE_DIR})

# The row-major -> column-major operand swap every CUDA GEMM goes through (pure arithmetic, built
# into the test directly so CPU-only builds run it too).
instbench_add_unit_test(cuda_gemm_plan ${_cuda_tests}/cuda_gemm_plan.c ${CMAKE_SOURCE_DIR}/src/cuda/gemm_plan.c)
# These programs compile CUDA backend sources themselves, so they see its private headers (and
# the CPU backend's, which they compare against).
instbench_test_internals(cuda_gemm_plan cuda)

# DDP bucketing of the gradient ranges (pure bookkeeping, built into the test directly).
instbench_add_unit_test(cuda_bucket ${_cuda_tests}/cuda_bucket.c ${CMAKE_SOURCE_DIR}/src/cuda/bucket.c)
instbench_test_internals(cuda_bucket cuda)

# The cuDNN version gates per GPU generation (pure, built into the test so CPU-only builds run it).
instbench_add_unit_test(cuda_cudnn_gate ${_cuda_tests}/cudnn_gate_test.c ${CMAKE_SOURCE_DIR}/src/cuda/cudnn_gate.c)
instbench_test_internals(cuda_cudnn_gate cuda)

# Index arithmetic of the data-movement kernels (patchify, attention head split/merge), shared
# with the kernels through src/cuda/layout.h; checked against the CPU backend and nested loops.
instbench_add_unit_test(cuda_layout ${_cuda_tests}/cuda_layout.c)
instbench_test_internals(cuda_layout cpu cuda)

# The CUDA backend's step (src/cuda/vit.c) on the CPU through a host stand-in for the runtime,
# the kernel launchers and cuBLASLt, against the timm fixtures and the CPU backend.  Needs the
# CUDA headers (types only), so CUDA builds only, the host-only one included.
#
# Which build runs which (scripts/test.sh runs each test once, tests/README.md): the ASan+UBSan
# build has all of these (INSTBENCH_CUDA_HOST_ONLY: no nvcc there), and a test runs there unless
# labelled.  Those on the host shim (the kernels as plain loops) lose nothing under the sanitizers.
# Those that run the kernels through cudasim lose its shared-memory checks there (ThreadSanitizer's
# instrumentation, which AddressSanitizer excludes), and cuda_vit_sim its gcov report, so:
# - cuda_vit_sim runs in both (release_too): the kernels checked and counted in the release build,
#   vit.c, gemm.c, the cuDNN glue and the stand-ins under the sanitizers;
# - cuda_sim_cli, cuda_cudnn_paths, cuda_dp_module (seed 1) and measure_allreduce run under the
#   sanitizers only: what they add is host code (the module through the loader and the CLI, the
#   cuDNN library search, the data-parallel path), their kernels being those cuda_vit_sim checks;
# - the others that run cudasim run in the release build only (release_only, or slow): the host
#   code they reach is what the tests above and cuda_gemm (the GEMM timing of cuda_vit_sim_seed2)
#   run under the sanitizers, where they would take up to 4x their release CPU time (cuda_gpus 124
#   CPU-seconds against 33, cuda_vit_shapes 202 against 71).  So do measure_launchers and
#   measure_slurm (tests/measure/measure.cmake).
if(INSTBENCH_CUDA)
  find_package(CUDAToolkit)
  if(CUDAToolkit_FOUND)
    # The host runtime is a shared library, as libcudart is: the cuDNN glue points the frontend's
    # own dlopen of the CUDA runtime at the object holding cudaGetDevice (src/cuda/cudnn_sdpa.cpp),
    # and the cuDNN stand-in queues its work on the same runtime's streams, so all three must
    # share one instance of it.
    set(_cudart_host ${INSTBENCH_TEST_FAKES}/cuda_host_runtime.c ${INSTBENCH_TEST_FAKES}/cuda_host_streams.c
                     ${INSTBENCH_TEST_FAKES}/cuda_host_graphs.c)
    add_library(instbench_cudart_host SHARED ${_cudart_host})
    set_target_properties(instbench_cudart_host PROPERTIES OUTPUT_NAME instbench-cudart-host)
    target_include_directories(instbench_cudart_host PUBLIC ${CUDAToolkit_INCLUDE_DIRS} ${INSTBENCH_TEST_FAKES})
    target_link_options(instbench_cudart_host PRIVATE -Wl,-z,defs)
    # cuDNN attention (src/cuda/cudnn_sdpa.cpp with NVIDIA's real cudnn-frontend) wherever the build
    # has the frontend's headers, in every test program that links src/cuda/vit.c: it loads the
    # CPU stand-in of libcudnn (tests/fakes/cudnn_standin.c) unless INSTBENCH_CUDNN_LIBRARY names another.
    # The glue is the module's own object (instbench_cudnn_glue, CMakeLists.txt), compiled once.
    if(TARGET instbench_cudnn_glue)
      set(_cudnn_standin ${INSTBENCH_TEST_FAKES}/cudnn_standin.c ${INSTBENCH_TEST_FAKES}/cudnn_standin_graph.c
                         ${INSTBENCH_TEST_FAKES}/cudnn_standin_exec.c)
      add_library(cudnn_standin SHARED ${_cudnn_standin})
      set_target_properties(cudnn_standin PROPERTIES OUTPUT_NAME cudnn-standin)
      target_include_directories(cudnn_standin SYSTEM PRIVATE ${INSTBENCH_CUDNN_INCLUDE})
      target_link_libraries(cudnn_standin PRIVATE instbench_cudart_host m)
      target_link_options(cudnn_standin PRIVATE -Wl,-z,defs)
      # ... and the same stand-in saying an older release (9.14.0), for the search that must load
      # the newest of the libcudnn.so.9 it finds (cudnn_paths.py)
      add_library(cudnn_standin_old SHARED ${_cudnn_standin})
      set_target_properties(cudnn_standin_old PROPERTIES OUTPUT_NAME cudnn-standin-old)
      target_compile_definitions(cudnn_standin_old PRIVATE STANDIN_VERSION=91400)
      target_include_directories(cudnn_standin_old SYSTEM PRIVATE ${INSTBENCH_CUDNN_INCLUDE})
      target_link_libraries(cudnn_standin_old PRIVATE instbench_cudart_host m)
      target_link_options(cudnn_standin_old PRIVATE -Wl,-z,defs)
      add_library(cudnn_standin_env OBJECT ${INSTBENCH_TEST_FAKES}/cudnn_standin_env.c)
      target_include_directories(cudnn_standin_env PRIVATE ${INSTBENCH_TEST_FAKES})
      target_compile_definitions(cudnn_standin_env PRIVATE INSTBENCH_CUDNN_STANDIN="$<TARGET_FILE:cudnn_standin>")
      set_target_properties(cudnn_standin_env PROPERTIES POSITION_INDEPENDENT_CODE ON)
    endif()
    function(instbench_cuda_test_runtime target)
      target_link_libraries(${target} PRIVATE instbench_cudart_host)
      if(TARGET instbench_cudnn_glue)
        target_link_libraries(${target} PRIVATE instbench_cudnn_glue cudnn_standin_env ${CMAKE_DL_LIBS})
        set_target_properties(${target} PROPERTIES LINKER_LANGUAGE CXX)
        add_dependencies(${target} cudnn_standin)
      endif()
    endfunction()
    # src/cuda/*.c compiled once for every program below that runs them on a stand-in (each used to
    # compile its own: 89 objects of 12 files in one build, about 95 CPU-seconds, and as many again
    # in the ASan+UBSan build).  Position-independent with hidden symbols, as the simulated module
    # takes them whole (instbench_cuda_sim); the test programs link the archive of the same objects
    # and take the members they reach, so a host-shim program's own stand-ins (tests/fakes/
    # cuda_host_shim.c: the GEMMs and kernel launchers as host loops) are what it runs, as before.
    # The sources read no test's definitions.  cuda_gemm_cov compiles gemm.c itself, with gcov.
    file(GLOB _cuda_c CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/cuda/*.c)
    add_library(cuda_host_objects OBJECT ${_cuda_c})
    set_target_properties(cuda_host_objects PROPERTIES POSITION_INDEPENDENT_CODE ON C_VISIBILITY_PRESET hidden)
    target_include_directories(cuda_host_objects PRIVATE ${CUDAToolkit_INCLUDE_DIRS} ${CMAKE_SOURCE_DIR}/include)
    target_link_libraries(cuda_host_objects PRIVATE instbench_util)   # its definitions and include paths
    instbench_test_internals(cuda_host_objects cpu cuda)
    add_library(cuda_host STATIC $<TARGET_OBJECTS:cuda_host_objects>)
    target_link_libraries(cuda_host PUBLIC instbench_core)
    # ... and a program that runs the whole backend in-process through the public table: it needs
    # the module's entry point, which src/backend.c refers to weakly (so that the executable links
    # without it), and a weak reference pulls no member out of an archive.
    function(instbench_cuda_in_process target)
      target_link_libraries(${target} PRIVATE cuda_host)
      target_link_options(${target} PRIVATE -Wl,--undefined=instbench_cuda_module)
    endfunction()
    if(TARGET instbench_cudnn_glue)
      # the glue's forward and backward at seven shapes against float64 attention (cudnn_sdpa_test.c)
      add_executable(cuda_cudnn_sdpa ${_cuda_tests}/cudnn_sdpa_test.c)
      target_link_libraries(cuda_cudnn_sdpa PRIVATE m)
      instbench_cuda_test_runtime(cuda_cudnn_sdpa)
      instbench_test_internals(cuda_cudnn_sdpa cuda)
      target_compile_definitions(cuda_cudnn_sdpa PRIVATE INSTBENCH_CUDNN_STANDIN="$<TARGET_FILE:cudnn_standin>")
      add_test(NAME cuda_cudnn_sdpa COMMAND cuda_cudnn_sdpa WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
      set_tests_properties(cuda_cudnn_sdpa PROPERTIES TIMEOUT 300)
    endif()
    instbench_add_unit_test(cuda_vit_host ${_cuda_tests}/cuda_vit_host.c ${INSTBENCH_TEST_FAKES}/cuda_host_shim.c)
    target_link_libraries(cuda_vit_host PRIVATE cuda_host)
    instbench_cuda_test_runtime(cuda_vit_host)
    set_tests_properties(cuda_vit_host PROPERTIES ENVIRONMENT INSTBENCH_TEST_CUDNN_RUNS=1)   # fixture a: hd 16
    target_include_directories(cuda_vit_host PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
    instbench_test_internals(cuda_vit_host cpu cuda)
    # The real kernels: every kernels/*.cu compiled as C++ for the CPU with tests/fakes/cudasim
    # (fibers per thread, barriers, warp shuffles), driving src/cuda/vit.c with the real gemm.c on
    # the cuBLASLt stand-in, against the timm fixtures and the CPU backend.
    enable_language(CXX)
    set(_coverage OFF)   # gcc's gcov reports what the CPU-run CUDA tests executed
    if(CMAKE_C_COMPILER_ID STREQUAL "GNU" AND NOT INSTBENCH_SANITIZE)
      find_program(GCOV_EXECUTABLE gcov)
      if(GCOV_EXECUTABLE)
        set(_coverage ON)
      endif()
    endif()
    file(GLOB _kernels CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/kernels/*.cu)
    set(_sim_sources)
    foreach(_cu ${_kernels})
      get_filename_component(_name ${_cu} NAME_WE)
      set(_cpp ${CMAKE_CURRENT_BINARY_DIR}/cudasim/${_name}.cpp)
      file(WRITE ${_cpp}.in "#include \"${_cu}\"\n")
      configure_file(${_cpp}.in ${_cpp} COPYONLY)   # rewritten only when it changes
      list(APPEND _sim_sources ${_cpp})
    endforeach()
    # ... and ThreadSanitizer's instrumentation without its runtime: every load and store of a
    # kernel calls tests/fakes/cudasim/shared.cpp first, which checks the block-shared memory (not under
    # AddressSanitizer, which compilers refuse to combine with it: there the checks are off)
    set(_sim_options "-include;${INSTBENCH_TEST_FAKES}/cudasim/cudasim.h")
    if(NOT INSTBENCH_SANITIZE)
      list(APPEND _sim_options "-fsanitize=thread")
      if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
        list(APPEND _sim_options "--param=tsan-instrument-func-entry-exit=0")
      endif()
    endif()
    set_source_files_properties(${_sim_sources} PROPERTIES COMPILE_OPTIONS "${_sim_options}")
    # The simulated kernels and cudasim itself once for the simulated module and cuda_dp_sim (built
    # as the module needs them, position-independent with hidden symbols, which the executables
    # take as well): 15 CPU-seconds of the build.  Both users need NCCL (below); without it nothing
    # would link these objects.
    if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
      add_library(cudasim_kernels OBJECT ${INSTBENCH_TEST_FAKES}/cudasim/cudasim.cpp ${INSTBENCH_TEST_FAKES}/cudasim/shared.cpp
                  ${_sim_sources})
      set_target_properties(cudasim_kernels PROPERTIES POSITION_INDEPENDENT_CODE ON CXX_VISIBILITY_PRESET hidden)
      target_include_directories(cudasim_kernels PRIVATE ${CUDAToolkit_INCLUDE_DIRS} ${INSTBENCH_TEST_FAKES}
                                 ${INSTBENCH_TEST_FAKES}/cudasim ${CMAKE_SOURCE_DIR}/include)
      instbench_test_internals(cudasim_kernels cuda)
      target_compile_options(cudasim_kernels PRIVATE -std=c++17 -ffp-contract=off)
    endif()
    # cuda_vit_sim compiles its own with gcov (below), and takes those objects where there is no
    # gcov (the ASan+UBSan build, where they took 26 of its CPU-seconds)
    if(_coverage OR NOT TARGET cudasim_kernels)
      set(_vit_sim_kernels ${INSTBENCH_TEST_FAKES}/cudasim/cudasim.cpp ${INSTBENCH_TEST_FAKES}/cudasim/shared.cpp ${_sim_sources})
    else()
      set(_vit_sim_kernels $<TARGET_OBJECTS:cudasim_kernels>)
    endif()
    add_executable(cuda_vit_sim ${_cuda_tests}/cuda_vit_host.c ${INSTBENCH_TEST_FAKES}/cuda_cublaslt_standin.c ${_vit_sim_kernels})
    set_target_properties(cuda_vit_sim PROPERTIES LINKER_LANGUAGE CXX)   # cudasim's C++, whichever objects
    target_link_libraries(cuda_vit_sim PRIVATE cuda_host instbench_core)
    instbench_cuda_test_runtime(cuda_vit_sim)
    target_include_directories(cuda_vit_sim PRIVATE ${CUDAToolkit_INCLUDE_DIRS} ${INSTBENCH_TEST_LIB} ${INSTBENCH_TEST_FAKES}
                               ${INSTBENCH_TEST_FAKES}/cudasim)
    target_compile_definitions(cuda_vit_sim PRIVATE CUDA_VIT_SIM)
    target_compile_options(cuda_vit_sim PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-std=c++17 -ffp-contract=off>)
    instbench_test_internals(cuda_vit_sim cpu cuda)
    # with gcc, the run also says how much of the kernels it executed: every kernel must run
    if(_coverage)
      target_compile_options(cuda_vit_sim PRIVATE --coverage)
      target_link_options(cuda_vit_sim PRIVATE --coverage)
      add_test(NAME cuda_vit_sim
               COMMAND bash ${INSTBENCH_TEST_LIB}/coverage_run.sh ${Python3_EXECUTABLE} $<TARGET_FILE:cuda_vit_sim>
                       ${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/cuda_vit_sim.dir 90 ${CMAKE_SOURCE_DIR}/kernels/
               WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
    else()
      add_test(NAME cuda_vit_sim COMMAND cuda_vit_sim WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
    endif()
    set_tests_properties(cuda_vit_sim PROPERTIES TIMEOUT 600 LABELS release_too
                         ENVIRONMENT "CUDASIM_SEED=1;INSTBENCH_TEST_CUDNN_RUNS=1")
    # Every test that runs the kernels through cudasim runs under two seeds (issue 25): as
    # registered (seed 1) and again as NAME_seed2.  The seed picks where the switching schedule
    # gives way at shared-memory accesses, the block order and the stream
    # scheduler's order (seeds 1 and 2 are its two opposite deterministic orders).
    # Seed 2 also times the GEMMs (INSTBENCH_GEMM_TUNE=1) against a cuBLASLt offering three
    # algorithms, the second the fastest: the step with the timing runs agrees with the CPU backend.
    # Slow virtual speeds (0.1-0.4 GFLOP/s): every GEMM of the fixtures lasts a timing round's
    # 0.5 ms in one run, so each is timed over 3 runs, not up to 200 simulated ones.
    add_test(NAME cuda_vit_sim_seed2 COMMAND cuda_vit_sim WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
    set_tests_properties(cuda_vit_sim_seed2 PROPERTIES TIMEOUT 600 LABELS release_only ENVIRONMENT "CUDASIM_SEED=2;GCOV_PREFIX=${CMAKE_CURRENT_BINARY_DIR}/seed2-gcov;INSTBENCH_TEST_CUDNN_RUNS=1;INSTBENCH_GEMM_TUNE=1;CUBLASLT_STANDIN_ALGOS=0.1,0.4,0.2")
    # The real models' shapes (ViT-S, -B, -L widths and heads, 197 and 577 tokens, batch 1 to 4,
    # bf16 on the cuDNN and unfused paths, fp32) one step each against the CPU backend: what a lent
    # GPU runs and the fixtures' small models do not reach (issue 37's pre-flight).  Its gcov
    # counts go apart from cuda_vit_sim's, which reports the kernels' coverage.
    add_test(NAME cuda_vit_shapes COMMAND cuda_vit_sim shapes WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
    # ~35 s: every model's real widths and token counts, one step each (slow: `ctest -LE slow` skips it)
    set_tests_properties(cuda_vit_shapes PROPERTIES TIMEOUT 600 LABELS slow ENVIRONMENT
                         "CUDASIM_SEED=1;GCOV_PREFIX=${CMAKE_CURRENT_BINARY_DIR}/shapes-gcov;INSTBENCH_TEST_CUDNN_RUNS=1")
    # The whole CUDA module on the CPU: src/cuda/*.c with the simulated kernels, the cuBLASLt
    # stand-in, the host runtime and the NCCL stand-in (ranks as threads), built as a module the
    # real executable loads (INSTBENCH_CUDA_MODULE), so `verify --backend cuda` and `measure
    # --backend cuda` run end to end (cuda_sim_cli.py).
    if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
      add_library(instbench_cuda_sim MODULE $<TARGET_OBJECTS:cuda_host_objects> ${INSTBENCH_TEST_FAKES}/cuda_cublaslt_standin.c
                  ${INSTBENCH_TEST_FAKES}/cuda_nccl_shim.c $<TARGET_OBJECTS:cudasim_kernels>)
      set_target_properties(instbench_cuda_sim PROPERTIES OUTPUT_NAME instbench-cuda-sim PREFIX lib
                            C_VISIBILITY_PRESET hidden CXX_VISIBILITY_PRESET hidden LINKER_LANGUAGE CXX
                            LINK_DEPENDS ${CMAKE_SOURCE_DIR}/src/cuda/module.map)
      target_include_directories(instbench_cuda_sim PRIVATE ${CUDAToolkit_INCLUDE_DIRS} ${INSTBENCH_TEST_FAKES}
                                 ${INSTBENCH_TEST_FAKES}/cudasim)
      instbench_test_internals(instbench_cuda_sim cuda)
      target_compile_options(instbench_cuda_sim PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-std=c++17 -ffp-contract=off>)
      target_link_libraries(instbench_cuda_sim PRIVATE instbench_comm instbench_model instbench_util)
      instbench_cuda_test_runtime(instbench_cuda_sim)
      target_link_options(instbench_cuda_sim PRIVATE
        -Wl,--version-script=${CMAKE_SOURCE_DIR}/src/cuda/module.map -Wl,-z,defs)
      add_test(NAME cuda_sim_cli
               COMMAND ${Python3_EXECUTABLE} ${_cuda_tests}/cuda_sim_cli.py ${INSTBENCH_BIN}
                       $<TARGET_FILE:instbench_cuda_sim> ${INSTBENCH_TEST_DATA})
      set_tests_properties(cuda_sim_cli PROPERTIES TIMEOUT 900)
      if(TARGET instbench_cudnn_glue)   # the module carries the cuDNN glue and loads the stand-in
        set_tests_properties(cuda_sim_cli PROPERTIES ENVIRONMENT INSTBENCH_TEST_CUDNN=1)
        # the attention path decided once (issue 37): the newest cuDNN of a DLAMI-like layout, a
        # refusal planned as the unfused path under --batch-size auto, the non-deterministic fallback
        add_test(NAME cuda_cudnn_paths
                 COMMAND ${Python3_EXECUTABLE} ${_cuda_tests}/cudnn_paths.py ${INSTBENCH_BIN}
                         $<TARGET_FILE:instbench_cuda_sim> $<TARGET_FILE:cudnn_standin> $<TARGET_FILE:cudnn_standin_old>)
        set_tests_properties(cuda_cudnn_paths PROPERTIES TIMEOUT 600)
        # thirteen GPUs AWS rents, each pretended by the host runtime (CUDASIM_DEVICE): bf16 refused on a
        # T4, cuDNN's path per compute capability, the datasheet peak per name, auto batch per memory
        add_test(NAME cuda_gpus
                 COMMAND ${Python3_EXECUTABLE} ${_cuda_tests}/cuda_gpus.py ${INSTBENCH_BIN}
                         $<TARGET_FILE:instbench_cuda_sim> $<TARGET_FILE:cudnn_standin>)
        set_tests_properties(cuda_gpus PROPERTIES TIMEOUT 300 LABELS release_only)
      endif()
      # ... and as two processes over the real TCP rendezvous (torchrun's variables): a run to the
      # end, and a rank killed mid-run that the other must notice (its liveness channel, not a deadline)
      add_test(NAME cuda_sim_procs
               COMMAND ${Python3_EXECUTABLE} ${_cuda_tests}/cuda_sim_procs.py ${INSTBENCH_BIN}
                       $<TARGET_FILE:instbench_cuda_sim>)
      set_tests_properties(cuda_sim_procs PROPERTIES TIMEOUT 900 LABELS release_only)
      # scripts/gpu/gpu_check.sh itself, on that module with a tiny model (what the first GPU runs)
      add_test(NAME gpu_check_sim
               COMMAND ${Python3_EXECUTABLE} ${_cuda_tests}/gpu_check_sim.py ${INSTBENCH_BIN}
                       $<TARGET_FILE:instbench_cuda_sim> ${CMAKE_SOURCE_DIR})
      set_tests_properties(gpu_check_sim PROPERTIES TIMEOUT 1200 LABELS slow)
    endif()

    # ... and deliberate bugs in the kernels, vit.c, gemm.c, comm_nccl.c, backend_cuda.c, ddp.c and the cuDNN glue
    # (cudnn_sdpa.cpp, caught by cuda_cudnn_sdpa), each of which one of these tests must catch (on a copy of
    # the tree; a few minutes; MUTATION_FILTER=TEXT runs those whose name contains TEXT).
    add_test(NAME cuda_mutations COMMAND bash ${CMAKE_SOURCE_DIR}/tests/cuda/mutation_check.sh ${CMAKE_SOURCE_DIR})
    set_tests_properties(cuda_mutations PROPERTIES TIMEOUT 1800 LABELS slow)

    # src/cuda/gemm.c itself (descriptors, layouts, bias epilogue, alignment preferences, the
    # heuristic, the three roads to the cuBLAS fallback, the algorithm cache) on a cuBLASLt/cuBLAS
    # stand-in written from their documented semantics, against a row-major reference.
    instbench_add_unit_test(cuda_gemm ${_cuda_tests}/cuda_gemm.c ${INSTBENCH_TEST_FAKES}/cuda_cublaslt_standin.c ${_cudart_host})
    target_link_libraries(cuda_gemm PRIVATE cuda_host)
    target_include_directories(cuda_gemm PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
    instbench_test_internals(cuda_gemm cuda)
    # cuBLASLt's in-situ GEMM rate (src/cuda/gemm_rate.c) against a stand-in device whose speed
    # the test sets (CUBLASLT_STANDIN_GFLOPS), its GEMMs against this model's Linear layers.
    instbench_add_unit_test(cuda_gemm_rate ${_cuda_tests}/gemm_rate_test.c ${INSTBENCH_TEST_FAKES}/cuda_cublaslt_standin.c ${_cudart_host})
    target_link_libraries(cuda_gemm_rate PRIVATE cuda_host)
    target_include_directories(cuda_gemm_rate PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
    instbench_test_internals(cuda_gemm_rate cuda)
    # ... and the coverage of gemm.c that run reaches (every function, 95% of the lines)
    if(_coverage)
      add_executable(cuda_gemm_cov ${_cuda_tests}/cuda_gemm.c ${INSTBENCH_TEST_FAKES}/cuda_cublaslt_standin.c ${_cudart_host} ${CMAKE_SOURCE_DIR}/src/cuda/gemm.c
                     ${CMAKE_SOURCE_DIR}/src/cuda/gemm_plan.c)
      target_link_libraries(cuda_gemm_cov PRIVATE instbench_core)
      target_include_directories(cuda_gemm_cov PRIVATE ${CUDAToolkit_INCLUDE_DIRS} ${INSTBENCH_TEST_LIB} ${INSTBENCH_TEST_FAKES})
      instbench_test_internals(cuda_gemm_cov cuda)
      target_compile_options(cuda_gemm_cov PRIVATE --coverage -O0)
      target_link_options(cuda_gemm_cov PRIVATE --coverage)
      add_test(NAME cuda_gemm_coverage
               COMMAND bash ${INSTBENCH_TEST_LIB}/coverage_run.sh ${Python3_EXECUTABLE} $<TARGET_FILE:cuda_gemm_cov>
                       ${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/cuda_gemm_cov.dir 95 src/cuda/gemm.c
               WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
    endif()
    # Data parallelism (NCCL comm, DDP buckets, dp) the same way, NCCL's collectives between threads.
    if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
      instbench_add_unit_test(cuda_dp_host ${_cuda_tests}/cuda_dp_host.c ${INSTBENCH_TEST_FAKES}/cuda_host_shim.c ${INSTBENCH_TEST_FAKES}/cuda_nccl_shim.c)
      instbench_cuda_in_process(cuda_dp_host)
      instbench_cuda_test_runtime(cuda_dp_host)
      target_include_directories(cuda_dp_host PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
      instbench_test_internals(cuda_dp_host cpu cuda)
      # ... and the same with the real kernels and gemm.c (tests/fakes/cudasim, the cuBLASLt stand-in) on
      # ordered streams whose scheduler runs the comm stream's allreduces as early as their event
      # waits allow: a missing wait averages gradients not yet computed.
      add_executable(cuda_dp_sim ${_cuda_tests}/cuda_dp_host.c ${INSTBENCH_TEST_FAKES}/cuda_cublaslt_standin.c ${INSTBENCH_TEST_FAKES}/cuda_nccl_shim.c
                     $<TARGET_OBJECTS:cudasim_kernels>)
      target_link_libraries(cuda_dp_sim PRIVATE instbench_core)
      instbench_cuda_in_process(cuda_dp_sim)
      instbench_cuda_test_runtime(cuda_dp_sim)
      target_include_directories(cuda_dp_sim PRIVATE ${CUDAToolkit_INCLUDE_DIRS} ${INSTBENCH_TEST_LIB} ${INSTBENCH_TEST_FAKES}
                                 ${INSTBENCH_TEST_FAKES}/cudasim)
      target_compile_definitions(cuda_dp_sim PRIVATE CUDA_DP_SIM)
      set_target_properties(cuda_dp_sim PROPERTIES LINKER_LANGUAGE CXX)   # cudasim_kernels' objects
      target_compile_options(cuda_dp_sim PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-std=c++17 -ffp-contract=off>)
      instbench_test_internals(cuda_dp_sim cpu cuda)
      add_test(NAME cuda_dp_sim COMMAND cuda_dp_sim WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
      set_tests_properties(cuda_dp_sim PROPERTIES TIMEOUT 600 LABELS release_only ENVIRONMENT CUDASIM_SEED=1)
      add_test(NAME cuda_dp_sim_seed2 COMMAND cuda_dp_sim WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
      set_tests_properties(cuda_dp_sim_seed2 PROPERTIES TIMEOUT 600 LABELS release_only ENVIRONMENT CUDASIM_SEED=2)
      # ... and the same program through the loader and the public backend table alone: here on the
      # simulated module, on a machine with two GPUs on the real one (scripts/gpu/gpu_check.sh, dp_equal)
      if(TARGET instbench_cuda_sim)
        add_executable(cuda_dp_module ${_cuda_tests}/cuda_dp_host.c)
        target_link_libraries(cuda_dp_module PRIVATE instbench_core)
        target_compile_definitions(cuda_dp_module PRIVATE CUDA_DP_MODULE)
        target_include_directories(cuda_dp_module PRIVATE ${CUDAToolkit_INCLUDE_DIRS} ${INSTBENCH_TEST_LIB} ${INSTBENCH_TEST_FAKES})
        instbench_test_internals(cuda_dp_module cuda)
        add_test(NAME cuda_dp_module COMMAND cuda_dp_module WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
        set_tests_properties(cuda_dp_module PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77
                             ENVIRONMENT "INSTBENCH_CUDA_MODULE=$<TARGET_FILE:instbench_cuda_sim>;CUDASIM_SEED=1")
        add_test(NAME cuda_dp_module_seed2 COMMAND cuda_dp_module WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
        set_tests_properties(cuda_dp_module_seed2 PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77 LABELS release_only
                             ENVIRONMENT "INSTBENCH_CUDA_MODULE=$<TARGET_FILE:instbench_cuda_sim>;CUDASIM_SEED=2")
      endif()
      # ... and measure's timed loop (bench_run) over two cuda ranks.
      instbench_add_unit_test(cuda_runner_host ${_cuda_tests}/cuda_runner_host.c ${INSTBENCH_TEST_FAKES}/cuda_host_shim.c ${INSTBENCH_TEST_FAKES}/cuda_nccl_shim.c)
      instbench_cuda_in_process(cuda_runner_host)
      instbench_cuda_test_runtime(cuda_runner_host)
      target_include_directories(cuda_runner_host PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
      instbench_test_internals(cuda_runner_host cpu cuda)
      # ... and across two forked processes joined by the rendezvous: a killed or failing process
      # is named in the other's error within seconds, through the liveness channel.
      instbench_add_unit_test(cuda_dp_procs ${_cuda_tests}/cuda_dp_procs.c ${INSTBENCH_TEST_FAKES}/cuda_host_shim.c ${INSTBENCH_TEST_FAKES}/cuda_nccl_shim.c)
      instbench_cuda_in_process(cuda_dp_procs)
      instbench_cuda_test_runtime(cuda_dp_procs)
      target_include_directories(cuda_dp_procs PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
      instbench_test_internals(cuda_dp_procs cpu cuda)
      set_tests_properties(cuda_dp_procs PROPERTIES TIMEOUT 60)
    endif()
  endif()
endif()

# The CUDA backend is a dlopened module (libinstbench-cuda.so): the executable must run without it
# (copied alone into an empty directory) and name what is missing when --backend cuda needs it.
add_test(NAME cuda_module_absent
         COMMAND bash ${_cuda_tests}/cuda_module.sh absent ${INSTBENCH_BIN} ${CMAKE_C_COMPILER})
if(TARGET instbench_cuda)
  # ... and the executable links no CUDA library (ELF DT_NEEDED), the module exports one symbol.
  add_test(NAME cuda_module_deps
           COMMAND bash ${_cuda_tests}/cuda_module.sh deps ${INSTBENCH_BIN} $<TARGET_FILE:instbench_cuda>)
endif()
