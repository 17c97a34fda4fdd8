# comm/ (src/comm/): the TCP rendezvous that carries the NCCL unique id between nodes, and the
# liveness channel on its connections.  Both run on CPUs alone.
instbench_add_unit_test(comm_rendezvous ${CMAKE_CURRENT_LIST_DIR}/comm_rendezvous.c)
set_tests_properties(comm_rendezvous PROPERTIES TIMEOUT 60)
# ... and the connections it keeps open afterwards (src/comm/liveness.c), between forked processes:
# a killed or failing process is reported by every other one, a clean goodbye never, strangers
# and broken frames are named without crashing or hanging anything.
instbench_add_unit_test(comm_liveness ${CMAKE_CURRENT_LIST_DIR}/comm_liveness.c)
set_tests_properties(comm_liveness PROPERTIES TIMEOUT 60)
# ... and a misconfigured job failing at once instead of at the limit: a duplicate rank, a stranger
# on the port, a silent listener, a name that does not exist (the last two wait out their own
# bounds, 10 s and 30 s, side by side: `waits`).
instbench_add_unit_test(comm_rendezvous_errors ${CMAKE_CURRENT_LIST_DIR}/comm_rendezvous_errors.c)
set_tests_properties(comm_rendezvous_errors PROPERTIES TIMEOUT 120 LABELS waits)
# ... and the ranks a hello claims compared as the numbers they are: a first rank and count whose
# sum passes 2^32 neither fails the job as a duplicate nor is named by a wrapped rank; nor does a
# count of 0 whose first rank is inside a peer's.
instbench_add_unit_test(comm_hello_ranks ${CMAKE_CURRENT_LIST_DIR}/comm_hello_ranks.c)
set_tests_properties(comm_hello_ranks PROPERTIES TIMEOUT 60)
