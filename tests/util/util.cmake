# util (src/util/): the safe-write rules every file the tool writes goes through.
instbench_add_unit_test(util_safewrite ${CMAKE_CURRENT_SOURCE_DIR}/util_safewrite.c)
# "did you mean X?": the edit distance, the instance size grammar and the natural order of type names.
instbench_add_unit_test(util_suggest ${CMAKE_CURRENT_SOURCE_DIR}/util_suggest.c)
