# sweep (issue 23).  Each helper adds its own lines below its own heading, so the parts merge.

# --- the instance's side (INST): user data, source archive, instance simulator ---
# A driver for src/sweep/userdata.c (render, log-nodes, archive).
add_executable(userdata_probe ${CMAKE_CURRENT_LIST_DIR}/userdata_probe.c)
target_link_libraries(userdata_probe PRIVATE instbench_core)
