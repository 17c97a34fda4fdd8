# cmake -DSRC=DIR -DOUT=FILE.tar.gz -P source_archive.cmake
# Packs the files cmake/source_archive_files.cmake lists into OUT, reproducibly: the same sources
# give the same bytes (so the same sha256, the S3 key `sweep run` uploads it under): names sorted,
# every mtime SOURCE_DATE_EPOCH (else 2000-01-01), owner and group 0, modes a+rX,u+w,go-w (only the
# executable bit of the tree survives), GNU format, gzip -n (no name or time in its header).
# GNU tar (>= 1.28, for --sort) and gzip; written to OUT.tmp, then renamed.
include(${CMAKE_CURRENT_LIST_DIR}/source_archive_files.cmake)
if(DEFINED ENV{SOURCE_DATE_EPOCH})
  set(_mtime $ENV{SOURCE_DATE_EPOCH})
else()
  set(_mtime 946684800)
endif()
find_program(_tar NAMES gtar tar REQUIRED)
find_program(_gzip NAMES gzip REQUIRED)
string(REPLACE ";" "\n" _list "${INSTBENCH_SOURCE_ARCHIVE_RELATIVE}")
file(WRITE ${OUT}.list "${_list}\n")
execute_process(
  COMMAND ${_tar} --create --file=- --format=gnu --sort=name --mtime=@${_mtime} --owner=0 --group=0
          --numeric-owner --mode=a+rX,u+w,go-w --no-recursion -C ${SRC} --files-from=${OUT}.list
  COMMAND ${_gzip} -n -9
  OUTPUT_FILE ${OUT}.tmp
  RESULTS_VARIABLE _rcs)
file(REMOVE ${OUT}.list)
if(NOT _rcs STREQUAL "0;0")
  file(REMOVE ${OUT}.tmp)
  message(FATAL_ERROR "packing ${OUT} failed (tar, gzip: ${_rcs}); GNU tar 1.28 or later is needed")
endif()
file(RENAME ${OUT}.tmp ${OUT})
