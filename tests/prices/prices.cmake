# prices (tests/prices/, included by tests/CMakeLists.txt; the unit tests run in tests/, where
# data/prices/ is): the instbench.prices/v1 format, service parsers, sources, snapshot and `instbench prices`.
instbench_add_unit_test(prices_json_test ${CMAKE_CURRENT_LIST_DIR}/prices_json_test.c)
instbench_add_unit_test(prices_parsers_test ${CMAKE_CURRENT_LIST_DIR}/prices_parsers_test.c)
# The Advisor's savings as a prices file states it (-1 a real figure, null unknown) in the table, CSV,
# JSON rows and the document written back; a savings figure without a bucket refused.
instbench_add_unit_test(prices_advisor_savings ${CMAKE_CURRENT_LIST_DIR}/prices_advisor_savings.c)
# A prices file whose times lie in the future (past the cache's clock skew) is refused, naming the field.
instbench_add_unit_test(prices_file_times ${CMAKE_CURRENT_LIST_DIR}/prices_file_times.c)
# AWS answers held to AWS's shapes (issue 39): plain decimals, calendar-valid times, in every answer parser
instbench_add_unit_test(prices_hostile_answers_test ${CMAKE_CURRENT_LIST_DIR}/prices_hostile_answers_test.c)

# `instbench prices` against the fake AWS, tests/fakes/aws_fake_server.py (botocore-verified signatures); expected
# values computed in Python from data/ (the price CSV and the Spot Advisor data, prices_live_lib.py).
# prices_live.py: live answers, faults, usage, zones, names; prices_live_cache.py: the price cache.
foreach(case many_types pagination concurrency faults session_token_no_secrets sagemaker usage exit_codes zones names)
  add_test(NAME prices_live_${case}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/prices_live.py ${INSTBENCH_BIN}
                   ${INSTBENCH_PRICE_DATA} ${case})
endforeach()
foreach(case cache corrupt_cache hostile_cache cache_trust snapshot_no_credentials)
  add_test(NAME prices_live_${case}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/prices_live_cache.py ${INSTBENCH_BIN}
                   ${INSTBENCH_PRICE_DATA} ${case})
endforeach()

# The snapshot: regenerated == committed, complete and equal to the CSV, embedded copy complete.
add_test(NAME prices_snapshot
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/prices_snapshot.py ${INSTBENCH_BIN}
                 ${CMAKE_SOURCE_DIR} ${INSTBENCH_PRICE_DATA})

# Names: misspelt types and regions are usage errors naming the nearest CSV name, patterns and
# --region all expand to what the CSV holds, listings in natural order (expectations from data/).
add_test(NAME prices_names
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/prices_names.py ${INSTBENCH_BIN}
                 ${INSTBENCH_PRICE_DATA})

# The shopping list (--accelerator, --min-*, --max-price, --max-spot-price, --sort): each filter,
# combinations, sort orders, exit codes and messages, in CSV, JSON and table output, from the
# snapshot, the cache and the fake AWS (expectations from data/).
add_test(NAME prices_filters
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/prices_filters.py ${INSTBENCH_BIN}
                 ${INSTBENCH_PRICE_DATA})

# The table's number style, its savings computed from the row's own prices and the snapshot's
# note only when a snapshot price is shown (expectations from data/ and a cache file it writes).
add_test(NAME prices_table_style
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/prices_table_style.py ${INSTBENCH_BIN}
                 ${INSTBENCH_PRICE_DATA})

# Machine output as tools read it (issue 21): jq, pandas.json_normalize and schemas/prices-v1.json on
# real JSON; Local Zones out of the lowest spot (also rank's); --nodes; per-accelerator prices; the
# snapshot's missing-price message; CSV times and shortest numbers (expectations from data/);
# --columns refused with csv and json, which carry every field (issue 33).
foreach(case json_tools local_zones nodes survival per_accelerator snapshot_message csv_format rank_local_zones
        columns)
  add_test(NAME prices_output_${case}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/prices_machine_output.py ${INSTBENCH_BIN}
                   ${INSTBENCH_PRICE_DATA} ${CMAKE_SOURCE_DIR} ${case})
endforeach()

# The prices CSV through LibreOffice Calc to xlsx, read by openpyxl: numbers are numbers, text stays
# text, the *_utc columns are date-times (skipped, exit 77, where LibreOffice is not installed).
add_test(NAME prices_spreadsheet
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/prices_spreadsheet.py ${INSTBENCH_BIN})
set_tests_properties(prices_spreadsheet PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)

# The markets bought ahead (issue 32): Capacity Block offerings and Savings Plan rates against the
# fake AWS (moto has neither call), every request compared with botocore's serializer, the money
# recomputed in Python from the offerings and rates the test wrote; offline and bad input.
foreach(case blocks plans offline usage hostile ultraservers columns)
  add_test(NAME prices_markets_${case}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/prices_markets.py ${INSTBENCH_BIN}
                   ${INSTBENCH_PRICE_DATA} ${case})
endforeach()

# `prices --nodes N --market spot`: N instances in one zone asked (botocore's serialization), scored.
add_test(NAME prices_placement_nodes
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/prices_placement_nodes.py ${INSTBENCH_BIN}
                 ${INSTBENCH_PRICE_DATA})
# Issue 39: a pattern with --market capacity-block means the types sold as blocks ('p*' leaves
# p3.2xlarge out), against the fake AWS.
add_test(NAME prices_block_patterns COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/prices_block_patterns.py
         ${INSTBENCH_BIN})

# Pricing answers the fake AWS does not give (tests/prices/hostile_pricing.py): two products past
# every filter at different prices are ambiguous (both SKUs named, nothing cached, order-free), a
# NextToken that never ends names the pages asked for (at --page-size 1 well before 200, while an
# honest answer of one product a page is read), and with --source auto AWS's "no such product" or
# $0-only answer is said as such, overriding the cache and the snapshot.
add_test(NAME prices_hostile_pricing
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/prices_hostile_pricing.py ${INSTBENCH_BIN}
                 ${CMAKE_SOURCE_DIR})

# Spot zones and their placement scores from an endpoint of its own (hostile_ec2.py): 64 zones, each scored, shown
# again from the cache; 65 or 32,000 zones of one type in one region refused as more than a prices file holds; a zone
# named for another region left out.
add_test(NAME prices_scores_many_zones COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/prices_scores_many_zones.py
         ${INSTBENCH_BIN} ${CMAKE_SOURCE_DIR})

# Each call prices makes reads a bounded answer (64 in flight x at most 8 MiB, not x 64 MiB): an endpoint of its own
# answering one call with 12 MiB fails it at once naming the call, the endpoint and the limit, the cache as it was;
# AWS's largest pages (MaxResults items in AWS's shapes) are read.
add_test(NAME prices_page_caps COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/prices_page_caps.py ${INSTBENCH_BIN})

# What prices keeps of an answer follows the question, not the pages: an endpoint of its own (hostile_ec2.py) sending
# new spot zones or scores page after page fails the query at its first page past the bound, one request each; a
# Capacity Block offering ID listed twice fails the query naming it.
add_test(NAME prices_answer_bounds COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/prices_answer_bounds.py
         ${INSTBENCH_BIN})

# Spot prices of 80 types in 30 zones at --page-size 5 from an endpoint of its own (hostile_ec2.py) that pages as AWS
# does: 480 pages, all read, for the bound on pages follows the question; a nextToken that never ends is still
# refused, saying after how many pages.
add_test(NAME prices_spot_many_pages COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/prices_spot_many_pages.py
         ${INSTBENCH_BIN} ${CMAKE_SOURCE_DIR})

# Spot prices of every EC2 type of two regions from an endpoint of its own (hostile_ec2.py) whose answer is a shuffled
# history (each type and zone priced up to three times, other types and regions' zones among them), paged: each
# record's zones and lowest price recomputed in Python as the docs define them (the latest price per zone).
add_test(NAME prices_spot_many_types COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/prices_spot_many_types.py
         ${INSTBENCH_BIN} ${CMAKE_SOURCE_DIR})
