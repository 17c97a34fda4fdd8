# util (src/util/): the safe-write rules every file the tool writes goes through.
# Included from tests/CMakeLists.txt: CMAKE_CURRENT_SOURCE_DIR is tests/ (check.h), the tests are here.
instbench_add_unit_test(util_safewrite ${CMAKE_CURRENT_LIST_DIR}/util_safewrite.c)
# "did you mean X?": the edit distance, the instance size grammar and the natural order of type names.
instbench_add_unit_test(util_suggest ${CMAKE_CURRENT_LIST_DIR}/util_suggest.c)
foreach(t util_safewrite util_suggest)
  target_include_directories(${t} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
endforeach()
