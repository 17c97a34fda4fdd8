# cmake -DSRC=DIR -DHEADER=FILE.h -DTEXT=FILE [-DGIT_TIMEOUT=SECONDS] -P revision.cmake
# The source revision a build compiles, for `instbench --version`, a result's tool.revision and the
# source archive's REVISION: one release number covers months of changes that moved a step's speed
# by 10-30%, so a result names the exact code.  Run by the target instbench_revision at every build
# (a commit made after configuring is seen at the next `cmake --build`); each file is written only
# when its content changes, so an unchanged revision rebuilds nothing.
# The value: in a git checkout (SRC/.git, a directory or a worktree's file) `git rev-parse HEAD`,
# 40 hex digits, and "-dirty" when tracked files differ from HEAD (untracked files leave it clean);
# in a tree without .git, the revision its REVISION file holds (a source archive: `sweep run`'s,
# cmake/source_archive.cmake, or gpu_bundle.sh's --baseline tree); else unknown.  git missing or
# failing (not a repository it trusts, no commit yet) is unknown too, never a failed build; so is
# git not answering within GIT_TIMEOUT seconds (default 30: a hung filesystem or fsmonitor hook
# would otherwise hang every build), with a warning.  A REVISION that is empty to stat (a FIFO, a
# link to /dev/zero) is not read: reading one would never end.
# HEADER: `#define INSTBENCH_REVISION "..."` ("" unknown); TEXT: the revision or "unknown", a line.
set(_rev "")
if(NOT GIT_TIMEOUT)
  set(GIT_TIMEOUT 30)
endif()
string(REPEAT "[0-9a-f]" 40 _hex)
if(EXISTS ${SRC}/.git)
  # a build started from a git hook inherits GIT_DIR and friends naming another repository
  unset(ENV{GIT_DIR})
  unset(ENV{GIT_WORK_TREE})
  unset(ENV{GIT_INDEX_FILE})
  execute_process(COMMAND git -C ${SRC} rev-parse --verify HEAD RESULT_VARIABLE _rc OUTPUT_VARIABLE _head
                  ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE TIMEOUT ${GIT_TIMEOUT})
  if(_rc STREQUAL "0" AND _head MATCHES "^${_hex}$")
    # --no-optional-locks: a build must not take the index lock a user's own git command may need
    execute_process(COMMAND git -C ${SRC} --no-optional-locks status --porcelain --untracked-files=no
                    RESULT_VARIABLE _rc OUTPUT_VARIABLE _changes ERROR_QUIET TIMEOUT ${GIT_TIMEOUT})
    if(_rc STREQUAL "0" AND _changes STREQUAL "")
      set(_rev ${_head})
    elseif(_rc STREQUAL "0")
      set(_rev ${_head}-dirty)
    endif()
  endif()
  if(_rc MATCHES "timeout")
    message(WARNING "revision.cmake: git in ${SRC} did not answer within ${GIT_TIMEOUT} s: the build's revision "
                    "is unknown (instbench --version, a result's tool.revision); check `git -C ${SRC} status`")
  endif()
elseif(EXISTS ${SRC}/REVISION AND NOT IS_DIRECTORY ${SRC}/REVISION)
  # a FIFO or a device reports size 0 and a regular file its bytes; open() on a FIFO would block
  file(SIZE ${SRC}/REVISION _size)
  if(_size GREATER 0)
    file(STRINGS ${SRC}/REVISION _line LIMIT_COUNT 1 LIMIT_INPUT 128)
    if(_line MATCHES "^${_hex}(-dirty)?$")
      set(_rev ${_line})
    endif()
  endif()
endif()

function(_write_if_changed path content)
  if(EXISTS ${path})
    file(READ ${path} _old)
    if(_old STREQUAL content)
      return()
    endif()
  endif()
  get_filename_component(_dir ${path} DIRECTORY)
  file(MAKE_DIRECTORY ${_dir})
  # a name of its own: two builds of one folder at once must not write one temporary file
  string(RANDOM LENGTH 12 _tag)
  file(WRITE ${path}.${_tag}.tmp "${content}")
  file(RENAME ${path}.${_tag}.tmp ${path})
endfunction()

if(_rev)
  set(_text "${_rev}\n")
else()
  set(_text "unknown\n")
endif()
if(HEADER)
  _write_if_changed(${HEADER} "/* GENERATED at build time by cmake/revision.cmake: do not edit. */\n\
#define INSTBENCH_REVISION \"${_rev}\"\n")
endif()
if(TEXT)
  _write_if_changed(${TEXT} "${_text}")
endif()
