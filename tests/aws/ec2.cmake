# The sweep's EC2 and SSM calls (src/aws/services/ec2_launch.c, ssm.c): a driver, and round trips
# against moto's server with signature checking on (tests/fakes/moto_server.py; boto3 is the other
# side) and, for what moto 5.2.5 lacks (placement groups, the public AMI parameters, faults), the
# fake AWS (tests/fakes/aws_fake_server.py, signatures checked with botocore).
add_executable(ec2_probe ${CMAKE_CURRENT_LIST_DIR}/ec2_probe.c)
target_link_libraries(ec2_probe PRIVATE instbench_core)
add_test(NAME ec2_calls_moto COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ec2_calls.py moto
         $<TARGET_FILE:ec2_probe>)
add_test(NAME ec2_calls_fake COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ec2_calls.py fake
         $<TARGET_FILE:ec2_probe>)
# DescribeInstanceTypes' supportedArchitectures (ec2_network.c): the architecture a sweep's AMI follows.
instbench_add_unit_test(ec2_type_arch ${CMAKE_CURRENT_LIST_DIR}/ec2_type_arch.c)
# DescribeSpotPriceHistory answered with 100,000 items over 50,000 (type, AZ) pairs: the newest
# price per pair, in time linear in the answer (a scan per item was quadratic); then sorted and given a
# page again, each item found as the entry it repeats (the index made anew for every entry kept).
instbench_add_unit_test(ec2_spot_many_zones ${CMAKE_CURRENT_LIST_DIR}/ec2_spot_many_zones.c)
