# The README documents every flag each command's --help prints.
add_test(NAME readme_flags COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/readme_flags.py
         ${INSTBENCH_BIN} ${CMAKE_SOURCE_DIR}/README.md)
