# Engine (model/, cpu/, comm/local): tests that compare against independent references.
instbench_add_unit_test(engine_gradcheck ${CMAKE_CURRENT_SOURCE_DIR}/engine_gradcheck.c)
instbench_add_unit_test(engine_dp ${CMAKE_CURRENT_SOURCE_DIR}/engine_dp.c)
instbench_add_unit_test(engine_learn ${CMAKE_CURRENT_SOURCE_DIR}/engine_learn.c)
add_test(NAME engine_counts COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/engine_counts.py ${INSTBENCH_BIN})
set_tests_properties(engine_counts PROPERTIES SKIP_RETURN_CODE 77)
set_tests_properties(engine_counts PROPERTIES LABELS slow)   # builds vit_large in timm: ~30 s
add_test(NAME engine_cli COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/engine_cli.py ${INSTBENCH_BIN})
