# The model (src/model/): the buffer plan both backends carve their memory from, with the CPU
# backend's memory estimate made from it; `instbench models` against timm and a hand FLOP formula;
# the model flags' usage errors.  (The test names keep the engine_ prefix they had.)
instbench_add_unit_test(engine_plan ${CMAKE_CURRENT_LIST_DIR}/engine_plan.c)
add_test(NAME engine_counts COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/engine_counts.py ${INSTBENCH_BIN})
set_tests_properties(engine_counts PROPERTIES SKIP_RETURN_CODE 77)
add_test(NAME engine_cli COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/engine_cli.py ${INSTBENCH_BIN})
