# sweep (issue 23).  Each helper adds its own lines below its own heading, so the parts merge.

# --- the instance's side (INST): user data, source archive, instance simulator ---
# A driver for src/sweep/userdata.c (render, log-nodes, archive).
add_executable(userdata_probe ${CMAKE_CURRENT_LIST_DIR}/userdata_probe.c)
target_link_libraries(userdata_probe PRIVATE instbench_core)
# Rendering: hostile values byte for byte through bash, bad values refused, shutdown's minutes, the
# 16 KB room with 64 nodes' botocore-presigned URLs, no credential outside the presigned URLs.
add_test(NAME sweep_userdata_render COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/sweep_userdata_render.py
         $<TARGET_FILE:userdata_probe> ${CMAKE_SOURCE_DIR}/src/sweep/userdata.sh)
# The script run in the instance simulator's sandbox against moto's S3: a real result that rank
# ranks, the timer first, build failure and tampered archive (the log's last 64 KiB), a two-node
# rendezvous, and one instance launched on moto's EC2 that the simulator runs and terminates.
add_test(NAME sweep_userdata_run COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/sweep_userdata_run.py
         ${INSTBENCH_BIN} $<TARGET_FILE:userdata_probe>)
set_tests_properties(sweep_userdata_run PROPERTIES TIMEOUT 900 LABELS waits)
# The source archive: the tracked sources the build needs (git ls-files as reference), reproducible,
# found beside the executable; and the instance building from it end to end (CPU-only, ccache).
# Label release_only: nearly all of its four minutes is that build, which is the same whichever
# instbench runs the test, so the ASan+UBSan ctest (scripts/test.sh) leaves it to the release one.
add_test(NAME sweep_userdata_archive COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/sweep_userdata_archive.py
         ${INSTBENCH_BIN} $<TARGET_FILE:userdata_probe> ${CMAKE_SOURCE_DIR} ${INSTBENCH_REVISION_TEXT})
set_tests_properties(sweep_userdata_archive PROPERTIES TIMEOUT 1800 LABELS release_only)

# --- launch, watch, terminate, status, cleanup (EXEC) ---
# Label waits (here and on sweep_userdata_run above): a test that spends most of its time waiting
# on the timers it tests (the sweep's polls and --max-minutes, an instance's simulated minutes, an
# address that comes 40 s late): 2-core runs took 33-88 s each for 16-26 s of CPU.  scripts/test.sh
# runs them beside the other tests instead of in one of their slots.
# sweep run|status|cleanup against the fault-injecting fake EC2 (tests/sweep/fake_ec2.py): capacity
# per zone, quota, throttling, eventual consistency, a spot interruption, a failed build, a
# TerminateInstances that fails once, --max-cost, --max-minutes, SIGINT/SIGTERM, SIGKILL then
# cleanup --all with the state file gone, bad input.
add_test(NAME sweep_run_faults COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/sweep_run_faults.py ${INSTBENCH_BIN})
set_tests_properties(sweep_run_faults PROPERTIES TIMEOUT 600 LABELS waits)
# sweep run|cleanup against moto (signatures checked; placement groups, which moto lacks, served by
# the fake AWS behind a router, tests/sweep/moto_sweep.py): --max-cost refusal with zero instances,
# launch, tags, placement group, shutdown behaviour, no secret in the user data, --max-minutes,
# SIGINT/SIGTERM, SIGKILL then cleanup ID / --all with the state file gone.
add_test(NAME sweep_run_moto COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/sweep_run_moto.py ${INSTBENCH_BIN})
set_tests_properties(sweep_run_moto PROPERTIES TIMEOUT 600 LABELS waits)
# EFA: the interfaces AWS documents for p4d/p5 checked against botocore's serializer, the
# security group and Elastic IPs created and nothing left after the end or a cleanup by tag
add_test(NAME sweep_run_efa_moto COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/sweep_run_efa_moto.py ${INSTBENCH_BIN})
set_tests_properties(sweep_run_efa_moto PROPERTIES TIMEOUT 600 LABELS waits)
# The issue's bar: g5.xlarge:spot,4xg5.xlarge:spot,g5.12xlarge:on-demand on moto with the instance
# simulator running every instance's real user data: six instances, three results delivered and
# ranked, the rendezvous read by all four nodes, zero instances and placement groups left.
add_test(NAME sweep_run_e2e COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/sweep_run_e2e.py ${INSTBENCH_BIN})
set_tests_properties(sweep_run_e2e PROPERTIES TIMEOUT 600)
# The fourth audit's money findings against the fake EC2: a terminal or pipe that goes away (SIGPIPE
# ignored; SIGINT, SIGHUP, SIGQUIT after a closed stderr; `| less` quit; cleanup with a closed
# stderr), a node other than node 0 ending or stopping, a lost RunInstances answer found by its
# ClientToken (or needs-cleanup), a state file that cannot be written (no more launches; status
# --refresh and cleanup record what EC2 shows by tag), EFA leftovers in the status list, the worst
# case from the instance's own timer plus the boot allowance and the spot MaxPrice, the state lock.
add_test(NAME sweep_run_money COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/sweep_run_money.py ${INSTBENCH_BIN})
set_tests_properties(sweep_run_money PROPERTIES TIMEOUT 600 LABELS waits)
# `sweep cleanup --force` of a live run stops the run (fake_ec2.py, a launch in flight held): nothing
# launched after it, the launch in flight ended, the state file naming the cleanup; a lock whose pid
# is not the sweep's `sweep run` is not signalled, nor one whose lock file never names it (a name
# written late is waited for; INSTBENCH_SWEEP_HOLDER_WAIT_S, that wait, named in the help of status
# and cleanup and a bad value of it said), nor (as root) another user's; a run that cannot let go
# within --wait; --all, and --all --force ending a sweep started while it ran, in at most three
# passes (one started in the third is named, exit 1).
add_test(NAME sweep_cleanup_force COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/sweep_cleanup_force.py
         ${INSTBENCH_BIN})
set_tests_properties(sweep_cleanup_force PROPERTIES TIMEOUT 600 LABELS waits)
# sweep status and the state file read back as hostile input (files written by Python): listing,
# details with the cost recomputed, JSON round trip, a dozen hostile files refused in one line.
add_test(NAME sweep_status COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/sweep_status.py ${INSTBENCH_BIN})
# Issue 33: the sweep's money and state as hostile ground, against the fake EC2: cleanup looks where
# the sweep ran and never writes "terminated" for an instance it did not see end; the cost of an
# instance whose end is unknown stops at launch + max_minutes, --refresh records EC2's end; every
# hostile state file (FIFO, /dev/zero link, 300 MB, empty candidates, C1 controls, \u0000, ...) through
# status and cleanup under a 10-second timeout and a 1 GiB address-space limit; valid JSON from
# `status --format json` with an unreadable file among the good ones.
# Under the sanitizers (which reserve terabytes of address space) the limit and the memory bounds
# are left out, as for rank_memory; every sanitizer report fails the test.
if(INSTBENCH_SANITIZE)
  set(_sweep_hostile_mode --sanitized)
else()
  set(_sweep_hostile_mode)
endif()
add_test(NAME sweep_state_hostile COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/sweep_state_hostile.py ${INSTBENCH_BIN}
         ${_sweep_hostile_mode})
set_tests_properties(sweep_state_hostile PROPERTIES TIMEOUT 600)

# Issue 39: the state file held to AWS's id and address shapes (each refusal names its field), no
# duplicate instance, no impossible EFA layout or date, deep JSON named; escapes in JSON and messages.
add_test(NAME sweep_state_shapes COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/sweep_state_shapes.py ${INSTBENCH_BIN})

# --- Capacity Blocks (issue 32) ---
# sweep plan --capacity-reservation against the fake AWS: DescribeCapacityReservations and the
# RunInstances DryRun into the block compared with botocore's serializer, the block counted as
# committed (nothing in the worst case), every refusal (not a block, not active yet, another type,
# too few free instances, past its end, unknown or malformed ID) exit 2.
add_test(NAME sweep_capacity_block COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/sweep_capacity_block.py
         ${INSTBENCH_BIN})
# sweep run into a Capacity Block (fake_ec2.py): one launch, in the block's zone only, with the
# capacity-block market and the reservation as target, no placement group of ours; the block
# counted as committed in the report.
add_test(NAME sweep_run_block COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/sweep_run_block.py ${INSTBENCH_BIN})
set_tests_properties(sweep_run_block PROPERTIES TIMEOUT 600)
