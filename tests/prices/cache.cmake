# The price cache keyed by endpoint (issue 22): answers of an AWS_ENDPOINT_URL server (the fake AWS,
# tests/fakes/aws_fake_server.py) never serve AWS's queries nor the reverse; expectations from the snapshot.
add_test(NAME cache_endpoint
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cache_endpoint.py ${INSTBENCH_BIN} ${CMAKE_SOURCE_DIR})

# One command's requests together on reused connections: `prices` 10 types x 2 regions is one
# round trip of 44 requests, NextToken pages reuse connections; counted by the fake AWS (its
# connections, requests and sequential round trips), so the checks do not depend on load.
add_test(NAME transport_round_trips
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/round_trips.py ${INSTBENCH_BIN} ${INSTBENCH_PRICE_DATA})
