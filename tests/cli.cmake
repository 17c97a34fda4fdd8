# The command-line shell itself (src/main.c): what holds for every command.
add_test(NAME cli_stdout COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/cli_stdout.py
         ${INSTBENCH_BIN} ${INSTBENCH_TEST_DATA})
# Every file a command writes goes through the safe writer: prices -o and rank --plot.
add_test(NAME cli_files COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/cli_files.py ${INSTBENCH_BIN})
# One option parser for every command: --flag=value, --, unknown flags, missing values, ranges.
add_test(NAME cli_args COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/cli_args.py ${INSTBENCH_BIN})
