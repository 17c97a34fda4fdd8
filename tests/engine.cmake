# Engine (model/, cpu/, comm/local): tests that compare against independent references.
instbench_add_unit_test(engine_gradcheck ${CMAKE_CURRENT_SOURCE_DIR}/engine_gradcheck.c)
