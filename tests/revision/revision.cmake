# The source revision a build compiles (cmake/revision.cmake, the target instbench_revision in
# CMakeLists.txt): the script on repositories and trees made by the test, git's answer the reference.
add_test(NAME revision_script COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/revision_script.py
         ${CMAKE_COMMAND} ${CMAKE_SOURCE_DIR})
# A copy of the sources configured once: a commit made since is seen at the next build, an unchanged
# revision rewrites nothing, the source archive's REVISION is the packing build's.
add_test(NAME revision_build COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/revision_build.py
         ${CMAKE_COMMAND} ${CMAKE_SOURCE_DIR})
set_tests_properties(revision_build PROPERTIES TIMEOUT 600)
