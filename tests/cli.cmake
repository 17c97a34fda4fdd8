# The command-line shell itself (src/main.c): what holds for every command.
add_test(NAME cli_stdout COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/cli_stdout.py
         ${INSTBENCH_BIN} ${INSTBENCH_TEST_DATA})
# Every file a command writes goes through the safe writer: prices -o and rank --plot.
add_test(NAME cli_files COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/cli_files.py ${INSTBENCH_BIN})
