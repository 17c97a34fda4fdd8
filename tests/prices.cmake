# prices: the instbench.prices/v1 format, service parsers, sources, snapshot and `instbench prices`.
instbench_add_unit_test(prices_json_test prices_json_test.c)
