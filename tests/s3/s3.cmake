# S3 (src/aws/services/s3.c, `presign`, S3 inputs and outputs): moto's server (tests/fakes/moto_server.py,
# installed by scripts/ci/moto_env.sh) with signature checking on, botocore as the presigning
# reference, and the fake AWS for the faults moto does not make.
add_test(NAME s3_moto_selfcheck COMMAND ${Python3_EXECUTABLE} ${INSTBENCH_TEST_FAKES}/moto_server.py)
# A driver for the S3 calls (presign at a fixed time, put, get, list, bucket region).
add_executable(s3_probe ${CMAKE_CURRENT_LIST_DIR}/s3_probe.c)
target_link_libraries(s3_probe PRIVATE instbench_core)
# Presigned URLs equal botocore's generate_presigned_url byte for byte (time frozen for both).
add_test(NAME s3_presign_botocore COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/s3_presign_botocore.py
         $<TARGET_FILE:s3_probe>)
# Round trips against moto (signatures checked): hostile keys, 1,500 objects across pages, bucket
# regions, wrong signatures; boto3 is the other side.
add_test(NAME s3_moto COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/s3_moto.py $<TARGET_FILE:s3_probe>)
# The faults moto does not make, against the fake AWS's S3 (tests/fakes/fake_s3.py): region
# redirects, SlowDown/503, cut and truncated answers, an endless listing, the object cap, hostile keys.
add_test(NAME s3_faults COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/s3_faults.py $<TARGET_FILE:s3_probe>)
# `instbench presign`: URLs used by a client without credentials (checked with botocore's
# S3SigV4QueryAuth), tampered and expired URLs refused, the temporary-credentials warning, bad input.
add_test(NAME s3_presign_cli COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/s3_presign_cli.py ${INSTBENCH_BIN})
# measure --output s3://... (moto) and a presigned PUT URL (the fake AWS): uploads, checks before
# the run, the local fallback when the upload fails at the end.
add_test(NAME s3_measure_output COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/s3_measure_output.py
         ${INSTBENCH_BIN} ${CMAKE_SOURCE_DIR}/schemas/result-v1.json)
# measure --output with S3's query-string presigned form (AWSAccessKeyId, Signature, Expires) and
# SigV4's, both made by botocore and verified by the fake AWS's S3: uploaded, expiry from either
# form, a signature only in the fragment refused before the run, no signature or key id printed.
add_test(NAME s3_presign_forms COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/s3_presign_forms.py ${INSTBENCH_BIN})
# rank s3://BUCKET/PREFIX/ (moto, and the fake AWS for the object cap and hostile keys).
add_test(NAME s3_rank COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/s3_rank.py ${INSTBENCH_BIN})
# rank s3:// over .json.gz / .jsonl.gz objects (moto; Python's gzip module makes them and the
# plain reference): the same rows as plain local files, bombs, truncated and corrupt objects skipped.
add_test(NAME s3_rank_gzip COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/s3_rank_gzip.py ${INSTBENCH_BIN})
# rank s3://'s round trips one after another, counted by the fake AWS at 500 ms per answer: pages
# listed while the objects of the page before are fetched, 128 GETs in flight.
add_test(NAME s3_round_trips COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/s3_round_trips.py ${INSTBENCH_BIN})
# ListObjectsV2's <Size>: S3's decimal digits in range taken exactly; signs, whitespace, other
# bases and overflows refused, naming the object and the size.
instbench_add_unit_test(s3_list_sizes ${CMAKE_CURRENT_LIST_DIR}/s3_list_sizes.c)
# A failed listing names s3://BUCKET/PREFIX: S3's errors and unparsable pages (the fake AWS), and a
# later page listed beside GETs that is refused (rank, against a scripted endpoint).
add_test(NAME s3_list_messages COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/s3_list_messages.py
         $<TARGET_FILE:s3_probe> ${INSTBENCH_BIN})
# An S3 endpoint URL with user:password@: `presign` refuses it, naming the variable (botocore would
# keep the password in the URL); signed requests carry the Host botocore signs; no password printed.
add_test(NAME s3_presign_userinfo COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/s3_presign_userinfo.py
         ${INSTBENCH_BIN})
# rank s3:// against an endpoint that sends more than it lists: a GET brings at most its listed size
# and 1 MiB, an error answer at most 1 MiB (the memory bound of rank's batches).
add_test(NAME s3_rank_body_caps COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/s3_rank_body_caps.py
         ${INSTBENCH_BIN})
