# scripts/quickstart.sh, run as a newcomer runs it from a fresh clone, ends with a ranking of real
# measurements whose rows say where their throughput and price come from (tests/quickstart/quickstart_test.py).
add_test(NAME quickstart COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/quickstart_test.py
         ${INSTBENCH_BIN} ${CMAKE_SOURCE_DIR})
set_tests_properties(quickstart PROPERTIES TIMEOUT 900 LABELS slow)   # a real CPU measure: ~1-2 min
