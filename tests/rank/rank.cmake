# `instbench rank`: numbers against an independent Python model, hostile inputs,
# the SVG chart, flag handling, and the C pieces.
instbench_add_unit_test(rank_unit ${CMAKE_CURRENT_LIST_DIR}/rank_unit.c)
instbench_test_internals(rank_unit rank)   # white-box: group, score and seen by their internal API
add_test(NAME rank_math COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_math.py ${INSTBENCH_BIN})
# Fused and unfused attention runs: separate rows and medians, the attention column, the warning.
add_test(NAME rank_attention COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_attention.py ${INSTBENCH_BIN})
# Results of different builds (tool.revision): one warning naming them, JSON's inputs.revisions.
add_test(NAME rank_revisions COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_revisions.py ${INSTBENCH_BIN}
         ${CMAKE_SOURCE_DIR}/schemas/rank-v2.json ${CMAKE_SOURCE_DIR}/schemas/result-v1.json)
add_test(NAME rank_hostile COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_hostile.py ${INSTBENCH_BIN})
add_test(NAME rank_svg COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_svg.py ${INSTBENCH_BIN})
add_test(NAME rank_cli COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/rank_cli.sh ${INSTBENCH_BIN})
add_test(NAME rank_json_schema COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_schema.py
         ${INSTBENCH_BIN} ${CMAKE_SOURCE_DIR}/schemas/rank-v2.json ${CMAKE_SOURCE_DIR}/schemas/result-v1.json)
add_test(NAME rank_user_price COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_user_price.py
         ${INSTBENCH_BIN} ${CMAKE_SOURCE_DIR}/schemas/rank-v2.json ${CMAKE_SOURCE_DIR}/schemas/result-v1.json)
# docs/usage.md's example of AWS against a machine AWS cannot price, run as written.
add_test(NAME rank_doc_example COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_doc_example.py
         ${INSTBENCH_BIN} ${CMAKE_SOURCE_DIR}/docs/usage.md ${CMAKE_SOURCE_DIR}/configs/prices-snapshot.json)
# The table's number style: money, durations, upper-case headers, the sources line (expected
# strings from the fixtures and testlib's formatting rules).
add_test(NAME rank_table_style COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_table_style.py
         ${INSTBENCH_BIN})
add_test(NAME rank_10k_files COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_hostile.py ${INSTBENCH_BIN} --big)
set_tests_properties(rank_10k_files PROPERTIES LABELS slow)
add_test(NAME rank_measure_end_to_end COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_measure.py ${INSTBENCH_BIN})
set_tests_properties(rank_measure_end_to_end PROPERTIES LABELS slow)
# Big and endless inputs: a 60 MiB array under 200 MB RSS, JSON lines streamed, /dev/zero on
# stdin cut off, warnings capped.
# Under ASan the peaks are the sanitizer's (a 256 MB quarantine of freed blocks, shadow memory),
# not ours: the sanitized build checks the counts and cut-offs and leaves the RSS bounds to the
# release build.
if(INSTBENCH_SANITIZE)
  set(_rank_memory_mode --no-rss-bounds)
else()
  set(_rank_memory_mode)
endif()
add_test(NAME rank_memory COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_memory.py ${INSTBENCH_BIN}
         ${_rank_memory_mode})
# Untrusted text (names from result files, price files, the cache, IMDS, the machine) reaches the
# terminal escaped through rank's table writers (the helper itself: tests/output/).
add_test(NAME rank_untrusted_text COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_untrusted_text.py ${INSTBENCH_BIN})
# CSV opened in spreadsheets: formula-like text cells are prefixed with ' (rank and prices CSV).
add_test(NAME rank_csv_injection COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_csv_injection.py ${INSTBENCH_BIN})
# Each result counted once: duplicates by inode and run, symlink fan-out and --follow, backends and
# devices kept apart, duplicate JSON keys refused.
add_test(NAME rank_counting COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_counting.py ${INSTBENCH_BIN})
# Names: the --instance-types filter, the natural order of configurations, --az through the
# results' own zone name/ID pairs, --region and --az typos.
add_test(NAME rank_names COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_names.py ${INSTBENCH_BIN})
# Every row says what it is: extrapolated (--count), identity mismatch and run quality in JSON,
# CSV, the table's marks and legend, and the SVG; a real N-node run supersedes an extrapolation.
add_test(NAME rank_rows_honest COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_rows_honest.py ${INSTBENCH_BIN})
# The machine formats as jq, pandas and LibreOffice Calc take them: one set of column names,
# --columns in every format, numbers and date-times in Calc, the workload and unpriced rows in
# the CSV, rank -o and the default input.
add_test(NAME rank_machine_output COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_machine_output.py ${INSTBENCH_BIN})
set_tests_properties(rank_machine_output PROPERTIES TIMEOUT 600)
# Spot priced with its interruptions (src/rank/spot_risk.c): every figure against an independent
# 60-digit model over a grid, a Monte-Carlo simulation of the renewal process, the seed pair
# flipping exactly at its break-even rate, the table's columns and sentence, bad flag values,
# docs/usage.md's worked example run as written.
add_test(NAME rank_spot_risk COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_spot_risk.py ${INSTBENCH_BIN}
         ${CMAKE_SOURCE_DIR}/docs/usage.md)
# gzip-compressed results (.json.gz, .jsonl.gz; Python's gzip module makes them and the plain
# reference): the same rows as plain files, bombs, truncated and corrupt archives skipped (the
# bombs' peak RSS bounded in the release build only, as rank_memory's).
add_test(NAME rank_gzip COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_gzip.py ${INSTBENCH_BIN}
         ${_rank_memory_mode})
# The markets bought ahead (issue 32): one configuration ranked on-demand, spot, capacity-block and
# savings-plan against the fake AWS; whole-block cost, wait, the plan's commitment and break-even
# against on-demand and spot at Daly's efficiency, recomputed in Python (spot_model.py).
add_test(NAME rank_markets COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_markets.py
         ${INSTBENCH_BIN} ${CMAKE_SOURCE_DIR}/schemas/rank-v2.json ${INSTBENCH_PRICE_DATA})
# A savings-plan row's cost to target owes the term's commitment (--plan-utilisation: the share other
# work uses), judged by --budget and --sort cost as printed; a rate above on-demand never pays (issue 39).
add_test(NAME rank_plan_cost COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_plan_cost.py
         ${INSTBENCH_BIN} ${CMAKE_SOURCE_DIR}/schemas/rank-v2.json)
# --versus CONFIG: spot's break-even against the alternative named, recomputed with spot_model.py;
# the legend names the row; bad values exit 2.
add_test(NAME rank_versus COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_versus.py ${INSTBENCH_BIN})
# PLACEMENT asked as each row needs it (TargetCapacity = nodes, one zone, --placement-pool), against
# the fake AWS's checked GetSpotPlacementScores and botocore's serializer.
add_test(NAME rank_placement COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_placement.py ${INSTBENCH_BIN}
                                     ${INSTBENCH_PRICE_DATA})
# BUSBW: the runs' allreduce bus bandwidth, for the multi-node rows measured on all their nodes.
add_test(NAME rank_busbw COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_busbw.py ${INSTBENCH_BIN})
# The legend stays a few lines; --explain (or -v) says how every figure is made (issue 41).
add_test(NAME rank_legend COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_legend.py ${INSTBENCH_BIN})
# Nothing priced: one piece of advice on stdout and stderr, naming rank's own flags; followed, it ranks.
add_test(NAME rank_advice COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_advice.py ${INSTBENCH_BIN})
# GEMM SHARE: each row's share of the GEMM rate its machine reached in situ (issue 37)
add_test(NAME rank_gemm_share COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_gemm_share.py ${INSTBENCH_BIN})
# A Capacity Block or Savings Plan quote that fails (the fake's faults, no endpoint): --source auto
# ranks the rest with those rows unpriced and saying why, --source live refuses naming the market;
# without credentials or offline each row names its own market.
add_test(NAME rank_quote_faults COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_quote_faults.py ${INSTBENCH_BIN})
# Paid whole, at the edges: a target of exactly one Capacity Block's (one plan term's) hours costs one
# block (term), one second more costs two; every figure of both rows recomputed in exact fractions.
add_test(NAME rank_whole_units COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/rank_whole_units.py ${INSTBENCH_BIN})
