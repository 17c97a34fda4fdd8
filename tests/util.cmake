# util (src/util/): the safe-write rules every file the tool writes goes through.
instbench_add_unit_test(util_safewrite ${CMAKE_CURRENT_SOURCE_DIR}/util_safewrite.c)
