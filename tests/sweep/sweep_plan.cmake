# `instbench sweep plan` (src/sweep/candidates.c, plan.c, src/cmd/cmd_sweep_plan.c, sweep_setup.c):
# against moto's EC2 (signatures and IAM checked) and the fake AWS's SSM, every line recomputed
# from the price snapshot; DryRun refused; the documented IAM policy; bad input (exit 2).
add_test(NAME sweep_plan COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/sweep_plan.py ${INSTBENCH_BIN})
set_tests_properties(sweep_plan PROPERTIES TIMEOUT 900)
# arm64 types get the arm64 GPU AMI: p6e-gb200 (Grace) from the instance-type catalogue, a multi-node
# g5g from moto's DescribeInstanceTypes, the plan naming which (architecture_source).
add_test(NAME sweep_plan_arm64 COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/sweep_plan_arm64.py ${INSTBENCH_BIN})
set_tests_properties(sweep_plan_arm64 PROPERTIES TIMEOUT 600)
# The pure parts the CLI cannot reach: the AMI kind per type, spec forms, plans over synthetic prices.
instbench_add_unit_test(sweep_plan_test ${CMAKE_CURRENT_LIST_DIR}/sweep_plan_test.c)
# EFA interfaces of multi-node candidates against moto's DescribeInstanceTypes (AWS's data, each
# card's interface types): P6-B300's card 0 ENA only, P6-B200, P5, P4d, G6e (skipped, 77, while
# the catalogue lacks p6-b300.48xlarge).
add_test(NAME sweep_plan_efa COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/sweep_plan_efa.py ${INSTBENCH_BIN})
set_tests_properties(sweep_plan_efa PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77)
