# comm/ (src/comm/): the TCP rendezvous that carries the NCCL unique id between nodes, and the
# liveness channel on its connections.  Both run on CPUs alone.
instbench_add_unit_test(comm_rendezvous ${CMAKE_CURRENT_LIST_DIR}/comm_rendezvous.c)
set_tests_properties(comm_rendezvous PROPERTIES TIMEOUT 60)
# ... and the connections it keeps open afterwards (src/comm/liveness.c), between forked processes:
# a killed or failing process is reported by every other one, a clean goodbye never, strangers
# and broken frames are named without crashing or hanging anything.
instbench_add_unit_test(comm_liveness ${CMAKE_CURRENT_LIST_DIR}/comm_liveness.c)
set_tests_properties(comm_liveness PROPERTIES TIMEOUT 60)
