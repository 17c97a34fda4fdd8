# The price cache keyed by endpoint (issue 22): answers of an AWS_ENDPOINT_URL server (the fake AWS,
# tests/aws_fake_server.py) never serve AWS's queries nor the reverse; expectations from the snapshot.
add_test(NAME cache_endpoint
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cache_endpoint.py ${INSTBENCH_BIN} ${CMAKE_SOURCE_DIR})
