# util (src/util/): the safe-write rules every file the tool writes goes through.
# Included from tests/CMakeLists.txt; the tests are here, check.h in tests/lib/.
instbench_add_unit_test(util_safewrite ${CMAKE_CURRENT_LIST_DIR}/util_safewrite.c)
# "did you mean X?": the edit distance, the instance size grammar and the natural order of type names.
instbench_add_unit_test(util_suggest ${CMAKE_CURRENT_LIST_DIR}/util_suggest.c)
# Issue 33's readers of untrusted text: \u0000 in JSON strings, UTF-8 machine names, bounded reads of
# regular files only (a FIFO, a link, /dev/zero, a 300 MB file refused).
instbench_add_unit_test(util_hostile_text ${CMAKE_CURRENT_LIST_DIR}/util_hostile_text.c)
# The instance-type catalogue (src/util/instance_type.c) against AWS's pages and the price snapshot.
instbench_add_unit_test(util_instance_type ${CMAKE_CURRENT_LIST_DIR}/util_instance_type.c)
# Issue 39: the one date parser refuses impossible dates (2026-02-30) instead of rolling them over.
instbench_add_unit_test(util_dates ${CMAKE_CURRENT_LIST_DIR}/util_dates.c)
