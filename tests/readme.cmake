# docs/cli.md is generated from the option tables (`instbench help --markdown`) and must match;
# the README names every command and links it.
add_test(NAME cli_docs COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/cli_docs.py
         ${INSTBENCH_BIN} ${CMAKE_SOURCE_DIR}/docs/cli.md ${CMAKE_SOURCE_DIR}/README.md)

# Every instbench command in the README runs as written (measure as --dry-run), and shown output
# matches (tests/readme_examples.py).
add_test(NAME readme_examples COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/readme_examples.py
         ${INSTBENCH_BIN} ${CMAKE_SOURCE_DIR}/README.md)
set_tests_properties(readme_examples PROPERTIES TIMEOUT 600)
