# Every instbench command in the README runs as written (measure as --dry-run), and shown output
# matches (tests/cli/readme_examples.py).
add_test(NAME readme_examples COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/readme_examples.py
         ${INSTBENCH_BIN} ${CMAKE_SOURCE_DIR}/README.md)
# Label release_too: scripts/test.sh runs each test once, under the sanitizers where it can; this
# one also runs on the release binary, the one the README's reader builds.
set_tests_properties(readme_examples PROPERTIES TIMEOUT 600 LABELS release_too)
