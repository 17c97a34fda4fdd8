# cmake -DSRC=DIR -DOUT=FILE.tar.gz -DREVISION_FILE=FILE -P source_archive.cmake
# Packs the files cmake/source_archive_files.cmake lists into OUT, and REVISION_FILE (the packing
# build's revision, cmake/revision.cmake's TEXT) as REVISION at its root, which a build from the
# archive reports as its own; reproducibly: the same sources and revision give the same bytes (so
# the same sha256, the S3 key `sweep run` uploads it under): names sorted, every mtime
# SOURCE_DATE_EPOCH (else 2000-01-01), owner and group 0, modes a+rX,u+w,go-w (only the executable
# bit of the tree survives), GNU format, gzip -n (no name or time in its header).
# GNU tar (>= 1.28, for --sort and a position-sensitive --files-from) and gzip; written to
# OUT.tmp, then renamed.
if(NOT REVISION_FILE OR NOT EXISTS "${REVISION_FILE}")
  message(FATAL_ERROR "source_archive.cmake: -DREVISION_FILE names no file ('${REVISION_FILE}'): pass "
                      "cmake/revision.cmake's TEXT (the build's generated/revision/REVISION)")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/source_archive_files.cmake)
if(DEFINED ENV{SOURCE_DATE_EPOCH})
  set(_mtime $ENV{SOURCE_DATE_EPOCH})
else()
  set(_mtime 946684800)
endif()
find_program(_tar NAMES gtar tar REQUIRED)
find_program(_gzip NAMES gzip REQUIRED)
# REVISION in its sorted place: the names before it, it (from a folder of its own, where it has its
# name), the names after it; each -C applies to what follows it on tar's command line
get_filename_component(SRC ${SRC} ABSOLUTE)
get_filename_component(_revdir ${OUT}.rev ABSOLUTE)
set(_before "")
set(_after "")
foreach(_f ${INSTBENCH_SOURCE_ARCHIVE_RELATIVE})
  if(_f STRLESS "REVISION")
    string(APPEND _before "${_f}\n")
  else()
    string(APPEND _after "${_f}\n")
  endif()
endforeach()
file(WRITE ${OUT}.before "${_before}")
file(WRITE ${OUT}.after "${_after}")
file(REMOVE_RECURSE ${_revdir})
file(MAKE_DIRECTORY ${_revdir})
configure_file(${REVISION_FILE} ${_revdir}/REVISION COPYONLY)
execute_process(
  COMMAND ${_tar} --create --file=- --format=gnu --sort=name --mtime=@${_mtime} --owner=0 --group=0
          --numeric-owner --mode=a+rX,u+w,go-w --no-recursion -C ${SRC} --files-from=${OUT}.before
          -C ${_revdir} REVISION -C ${SRC} --files-from=${OUT}.after
  COMMAND ${_gzip} -n -9
  OUTPUT_FILE ${OUT}.tmp
  RESULTS_VARIABLE _rcs)
file(REMOVE ${OUT}.before ${OUT}.after)
file(REMOVE_RECURSE ${_revdir})
if(NOT _rcs STREQUAL "0;0")
  file(REMOVE ${OUT}.tmp)
  message(FATAL_ERROR "packing ${OUT} failed (tar, gzip: ${_rcs}); GNU tar 1.28 or later is needed")
endif()
file(RENAME ${OUT}.tmp ${OUT})
