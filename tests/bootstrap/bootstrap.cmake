# scripts/bootstrap.sh: the first README command installs what building and running need and no
# test-only package; no package install leaves a service enabled or running (a stubbed apt run,
# and this machine's own state where systemctl exists).
add_test(NAME bootstrap_services COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/bootstrap_test.py
         ${CMAKE_SOURCE_DIR})
