# The command-line shell itself (src/main.c, src/cmd/args.c): what holds for every command.
# (Included from tests/CMakeLists.txt: CMAKE_CURRENT_SOURCE_DIR is tests/, this folder is CMAKE_CURRENT_LIST_DIR.)
add_test(NAME cli_stdout COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli_stdout.py
         ${INSTBENCH_BIN} ${INSTBENCH_TEST_DATA})
# Every file a command writes goes through the safe writer: prices -o and rank --plot.
add_test(NAME cli_files COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli_files.py ${INSTBENCH_BIN})
# One option parser for every command: --flag=value, --, unknown flags, missing values, ranges.
add_test(NAME cli_args COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli_args.py ${INSTBENCH_BIN})
# Issue 39: one trimming rule for every flag value, argv escaped in every message, impossible dates
# refused, flags of a market not chosen refused, deep JSON named.
add_test(NAME cli_flag_rules COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli_flag_rules.py ${INSTBENCH_BIN})
# --version: the build's revision and features (oneDNN, CPU ISA, bf16 mode, CUDA and NCCL built with).
if(TARGET instbench_cuda)
  set(_cli_cuda ON)
elseif(INSTBENCH_CUDA AND INSTBENCH_CUDA_HOST_ONLY)
  set(_cli_cuda HOST_ONLY)   # built with CUDA, no module (CMakeLists.txt)
else()
  set(_cli_cuda OFF)
endif()
if(NCCL_INCLUDE_DIR)
  set(_cli_nccl_h ${NCCL_INCLUDE_DIR}/nccl.h)
else()
  set(_cli_nccl_h "")
endif()
add_test(NAME cli_version COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli_version.py ${INSTBENCH_BIN}
         ${PROJECT_VERSION} ${_cli_cuda} "${_cli_nccl_h}" ${CMAKE_SOURCE_DIR} ${INSTBENCH_REVISION_TEXT})
# Tables fit the terminal: every command on a pseudo-terminal of 80, 120 and 200 columns.
add_test(NAME cli_width COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli_width.py ${INSTBENCH_BIN}
         ${INSTBENCH_TEST_DATA})
# docs/cli.md is generated from the option tables (`instbench help --markdown`) and must match;
# the README names every command and links it.
add_test(NAME cli_docs COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli_docs.py
         ${INSTBENCH_BIN} ${CMAKE_SOURCE_DIR}/docs/cli.md ${CMAKE_SOURCE_DIR}/README.md)
# Every --help has examples, and each runs as written (offline: prices from the snapshot, measure as
# --dry-run, rank on fixture results, verify on a tests/data reference).
add_test(NAME cli_examples COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli_examples.py
         ${INSTBENCH_BIN} ${INSTBENCH_TEST_DATA})
# Commands: a misspelt one names the nearest, -h/--help before a command prints its help.
add_test(NAME cli_commands COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli_commands.py ${INSTBENCH_BIN})
# models: --format table|json|csv, the default by stdout, instbench.models/v1 (jq, pandas, data/-free
# expectations from the presets' timm dimensions), valid against schemas/models-v1.json and model-layout-v1.json.
add_test(NAME cli_models COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli_models.py ${INSTBENCH_BIN}
         ${CMAKE_SOURCE_DIR}/schemas)
# The flag vocabulary: one name per idea across commands (docs/cli.md "Flag vocabulary"), the
# retired spellings accepted with a note, a flag of another command named as such, help wrapped.
add_test(NAME cli_vocabulary COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli_vocabulary.py ${INSTBENCH_BIN})
# A decimal-comma locale (de_DE.UTF-8, built by localedef into a scratch folder) changes no output
# byte and makes no '1,5' a number: instbench stays in the C locale.  Skipped (77) without Debian's
# locales package, but for under CI=true, where it fails.
add_test(NAME cli_locale COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli_locale.py ${INSTBENCH_BIN})
set_tests_properties(cli_locale PROPERTIES SKIP_RETURN_CODE 77)
# args_value_follows (which argument after a flag is its value, for bench's reading of other
# measure processes' command lines) on every form of flag the parser reads, written out by hand.
instbench_add_unit_test(cli_args_follow ${CMAKE_CURRENT_LIST_DIR}/cli_args_follow.c)
instbench_test_internals(cli_args_follow cmd) # white-box: args.h is src/cmd's own header
# Every instbench command line of README.md, docs/usage.md, cli.md, design.md, formats.md and of every
# --help's examples is accepted (no exit 2) when run offline, placeholders filled in; the docs' usage
# error examples exit 2; lines that only name a command are listed as skipped, with why.
add_test(NAME cli_doc_commands COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli_doc_commands.py
         ${INSTBENCH_BIN} ${CMAKE_SOURCE_DIR})
