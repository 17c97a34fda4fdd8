# Module boundaries the build enforces (CMakeLists.txt: one library per src/<module>/, its
# private headers visible to it alone).  For every module target, each module's private header
# must fail to compile there except its own, and a public header must compile (the control).
# The executable is cmd's entry point (main.c) and sees cmd's headers only.
set(_boundary_headers instbench/prices.h aws/internal.h prices/internal.h rank/internal.h cmd/cmd.h
    cpu/ops.h cuda/api.h)
foreach(target ${INSTBENCH_MODULES} instbench)
  string(REGEX REPLACE "^instbench_" "" own ${target})
  if(target STREQUAL "instbench")
    set(own cmd)
  endif()
  add_test(NAME boundary_${own}_${target}
           COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/boundary_check.sh ${CMAKE_C_COMPILER}
                   "$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>" ${own} ${_boundary_headers})
endforeach()

# No include reaches around a boundary by a relative path, no module uses a symbol of a module its
# DEPS (CMakeLists.txt) do not name (output: util alone), and neither the modules nor the files
# inside one depend on each other in a cycle (read from the libraries' symbols).
get_property(_declared GLOBAL PROPERTY INSTBENCH_MODULE_DEPS)
set(_archives)
foreach(target ${INSTBENCH_MODULES})
  list(APPEND _archives $<TARGET_FILE:${target}>)
endforeach()
add_test(NAME module_graph
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/module_graph.py ${CMAKE_SOURCE_DIR}/src ${_declared}
                 ${_archives})

# Sizes a newcomer can read (check_source_size.py): no source file under src/ over 800 lines, no
# function over 150 without `long: <reason>` in the comment above it.  The self-test holds the
# check itself to files made to break each rule.
add_test(NAME source_size
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_source_size.py
                 ${CMAKE_SOURCE_DIR}/src)
add_test(NAME source_size_self_test
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_source_size.py --self-test)
# The suite is held to the same file cap, its Python and shell scripts included (the function rule
# stays src/'s: a C test's main() lists its cases one after another).
add_test(NAME source_size_tests
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_source_size.py --files-only
                 ${CMAKE_SOURCE_DIR}/tests)
