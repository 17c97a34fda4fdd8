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
set_tests_properties(sweep_userdata_run PROPERTIES TIMEOUT 900)
# The source archive: the tracked sources the build needs (git ls-files as reference), reproducible,
# found beside the executable; and the instance building from it end to end (CPU-only, ccache).
add_test(NAME sweep_userdata_archive COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/sweep_userdata_archive.py
         ${INSTBENCH_BIN} $<TARGET_FILE:userdata_probe> ${CMAKE_SOURCE_DIR})
set_tests_properties(sweep_userdata_archive PROPERTIES TIMEOUT 1800)
