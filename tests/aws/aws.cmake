# AWS client tests: the SigV4 suite, the credential chain, transport faults and IMDS, all
# against the fake AWS (tests/fakes/aws_fake_server.py, started by testlib.FakeAws) that checks every
# signature with botocore.

# AWS's SigV4 test vectors, vendored in tests/data/aws-sigv4-suite (SOURCE.md there); the test
# fails when they are missing.
add_executable(aws_sigv4_suite ${CMAKE_CURRENT_LIST_DIR}/aws_sigv4_suite.c)
target_link_libraries(aws_sigv4_suite PRIVATE instbench_core)
add_test(NAME aws_sigv4_suite COMMAND aws_sigv4_suite ${INSTBENCH_TEST_DATA}/aws-sigv4-suite)

# A driver for the client pieces, used by the endpoint tests below.
add_executable(aws_client_probe ${CMAKE_CURRENT_LIST_DIR}/aws_client_probe.c)
target_link_libraries(aws_client_probe PRIVATE instbench_core)
# white-box: drives IMDS, the plain requests, the config parser and the error parser directly
instbench_test_internals(aws_client_probe aws)

# The client against the local endpoint (botocore checks every signature), one ctest entry per
# area so they run in parallel and each stays short.
foreach(area EndpointSelfCheck SigningAndChain Endpoints Ec2Queries Imds Tls Transport)
  add_test(NAME aws_endpoint_${area}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/aws_endpoint_test.py
                   $<TARGET_FILE:aws_client_probe> ${area})
endforeach()

# Differential: our signer and botocore's SigV4Auth on 300 random requests.
add_test(NAME aws_sigv4_botocore
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/aws_sigv4_botocore.py $<TARGET_FILE:aws_client_probe> 300)

# Differential: the config/credentials file parser against botocore's reader on random files.
add_test(NAME aws_config_botocore
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/aws_config_botocore.py $<TARGET_FILE:aws_client_probe> 250)

# A profile's credential_process against botocore's ProcessProvider and shlex.split: the helper's
# argv, the order within a profile, what both refuse, the refresh before expiry; the credentials
# it prints sign requests the local endpoint checks.
add_test(NAME aws_credential_process
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/aws_credential_process.py $<TARGET_FILE:aws_client_probe>)

# Roles the AWS CLI assumes (a profile's role_arn, EKS's web identity), assumed against moto with
# signature checking on, the role's credentials signing an S3 PutObject, botocore the reference.
add_test(NAME aws_assume_role
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/aws_assume_role.py $<TARGET_FILE:aws_client_probe>
                 $<TARGET_FILE:s3_probe>)

# A profile's IAM Identity Center role: the token `aws sso login` cached, the portal's
# GetRoleCredentials on the fake, botocore's SSOProvider asking the same; the refusals.
add_test(NAME aws_sso COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/aws_sso.py $<TARGET_FILE:aws_client_probe>)

# What the client prints: no endpoint password, error bodies reduced to code and first line,
# invalid regions and unsupported credential sources named.
add_test(NAME aws_hygiene COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/aws_hygiene.py ${INSTBENCH_BIN})

# Issue 39: the shapes of AWS identifiers, IPv4 and host names (src/aws/ids.c), hand-worked cases.
instbench_add_unit_test(aws_ids ${CMAKE_CURRENT_LIST_DIR}/aws_ids.c)

# The response body buffer holds at most its limit and the NUL, also for a body exactly at the limit
# (which once took twice the limit); each body reads back as given.
instbench_add_unit_test(aws_body_cap ${CMAKE_CURRENT_LIST_DIR}/aws_body_cap.c)
# white-box: aws_body_append is the transport's own (src/aws/internal.h)
instbench_test_internals(aws_body_cap aws)

# IMDS answers IMDS does not give (a token request answered 200 without a token, a role listing
# failing with HTTP 500), from a scripted server: each said for what it is.
add_test(NAME aws_imds_answers
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/aws_imds_answers.py $<TARGET_FILE:aws_client_probe>)
# The container credentials token (variable or file): any control character refused before the
# endpoint is asked, naming the source, never the token; a file's trailing line end taken.
add_test(NAME aws_container_token COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/aws_container_token.py
         $<TARGET_FILE:aws_client_probe>)
# An endpoint that accepts and never answers: the wait is said once, at the first timed-out
# attempt, naming the endpoint (a command's calls would otherwise be silent for minutes).
add_test(NAME aws_no_answer COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/aws_no_answer.py ${INSTBENCH_BIN})
set_tests_properties(aws_no_answer PROPERTIES LABELS waits)
