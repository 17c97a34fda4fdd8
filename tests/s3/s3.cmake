# S3 (src/aws/services/s3.c, `presign`, S3 inputs and outputs): moto's server (tests/s3/moto_server.py,
# installed by scripts/moto_env.sh) with signature checking on, botocore as the presigning
# reference, and the fake AWS for the faults moto does not make.
add_test(NAME s3_moto_selfcheck COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/moto_server.py)
