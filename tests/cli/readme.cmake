# Every instbench command in the README runs as written (measure as --dry-run), and shown output
# matches (tests/cli/readme_examples.py).
add_test(NAME readme_examples COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/readme_examples.py
         ${INSTBENCH_BIN} ${CMAKE_SOURCE_DIR}/README.md)
set_tests_properties(readme_examples PROPERTIES TIMEOUT 600)
