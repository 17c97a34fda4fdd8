# AWS client tests (issue 3): the SigV4 suite, the credential chain, transport faults and IMDS, all
# against the local AWS test endpoint (scripts/aws_test_endpoint.py) that checks every signature
# with botocore.

# The AWS SigV4 test suite lives beside the checkout; the test fails when it is missing.
add_executable(aws_sigv4_suite aws_sigv4_suite.c)
target_link_libraries(aws_sigv4_suite PRIVATE instbench_core)
add_test(NAME aws_sigv4_suite COMMAND aws_sigv4_suite ${INSTBENCH_SHARED_DIR}/testdata/aws-sigv4-suite)

# A driver for the client pieces, used by the endpoint tests below.
add_executable(aws_client_probe aws_client_probe.c)
target_link_libraries(aws_client_probe PRIVATE instbench_core)
