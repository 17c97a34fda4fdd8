# `cmake --install` honours the prefix and installs what the binary needs at run time
# (tests/install/install_test.py: the installed instbench runs from elsewhere, offline).
add_test(NAME install_prefix COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/install_test.py
         ${CMAKE_COMMAND} ${CMAKE_BINARY_DIR})
