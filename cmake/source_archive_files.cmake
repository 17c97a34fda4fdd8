# The files of the source archive (included by CMakeLists.txt at configure time and by
# cmake/source_archive.cmake when it packs): what a build with INSTBENCH_TESTS=OFF reads, and the
# licence.  Not tests/, data/ (the price data the snapshot in configs/ was made from), docs/,
# scripts/ (none is used by the build), build trees or virtual environments.  Editor and patch
# leftovers are left out so an untidy tree packs what git would.
# In: SRC (the source dir; CMAKE_SOURCE_DIR when unset).  Out: INSTBENCH_SOURCE_ARCHIVE_FILES
# (absolute paths) and INSTBENCH_SOURCE_ARCHIVE_RELATIVE (relative to SRC), both sorted.
if(NOT SRC)
  set(SRC ${CMAKE_SOURCE_DIR})
endif()
set(_globs ${SRC}/src/* ${SRC}/include/* ${SRC}/kernels/* ${SRC}/cmake/* ${SRC}/configs/*)
if(CMAKE_SCRIPT_MODE_FILE)
  file(GLOB_RECURSE _files LIST_DIRECTORIES false RELATIVE ${SRC} ${_globs})
else()
  file(GLOB_RECURSE _files LIST_DIRECTORIES false CONFIGURE_DEPENDS RELATIVE ${SRC} ${_globs})
endif()
list(FILTER _files EXCLUDE REGEX "(~|\\.orig|\\.rej|\\.swp|\\.pyc)$|(^|/)(\\.#|#)[^/]*$|(^|/)__pycache__/")
list(APPEND _files CMakeLists.txt LICENSE)
list(SORT _files)
set(INSTBENCH_SOURCE_ARCHIVE_RELATIVE ${_files})
list(TRANSFORM _files PREPEND ${SRC}/ OUTPUT_VARIABLE INSTBENCH_SOURCE_ARCHIVE_FILES)
