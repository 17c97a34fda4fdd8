# CMake toolchain file: instbench for 64-bit Arm Linux (Graviton, Grace) from an x86-64 Debian or
# Ubuntu host, with the distribution's cross compiler (gcc-aarch64-linux-gnu) and its multiarch
# arm64 libraries (dpkg --add-architecture arm64; libcurl4-openssl-dev:arm64, ...), which live in
# /usr/lib/aarch64-linux-gnu and /usr/include/aarch64-linux-gnu beside the host's own: there is no
# separate sysroot, the cross compiler already searches those directories before /usr/include.
# scripts/ci/check_aarch64.sh installs all of it, builds with this file and runs the tests under
# qemu-user (CMAKE_CROSSCOMPILING_EMULATOR below: ctest prefixes it to every test program).
#
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DINSTBENCH_CUDA=OFF
#
# oneDNN: Debian's libdnnl-dev:arm64 cannot be installed beside the amd64 one (both ship a different
# /usr/include/oneapi/dnnl/dnnl_config.h); the script unpacks it into the build tree and passes
# DNNL_INCLUDE_DIR and DNNL_LIBRARY.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(INSTBENCH_CROSS_TRIPLET aarch64-linux-gnu)

set(CMAKE_C_COMPILER ${INSTBENCH_CROSS_TRIPLET}-gcc)
set(CMAKE_CXX_COMPILER ${INSTBENCH_CROSS_TRIPLET}-g++)
set(CMAKE_LIBRARY_ARCHITECTURE ${INSTBENCH_CROSS_TRIPLET})

# Libraries and headers only from the arm64 multiarch directories (and the cross toolchain's own
# /usr/aarch64-linux-gnu), never the host's x86-64 ones; programs (python3, pkg-config) from the host.
set(CMAKE_FIND_ROOT_PATH /usr/${INSTBENCH_CROSS_TRIPLET})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
set(CMAKE_IGNORE_PATH /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu /usr/include/x86_64-linux-gnu)
# pkg-config (libcjson) reads the arm64 .pc files alone
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${INSTBENCH_CROSS_TRIPLET}/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")

# The test programs run under qemu-user: the arm64 libc6 that the multiarch libraries bring is in /,
# so the emulator needs no -L prefix (QEMU_LD_PREFIX can still override it).
find_program(INSTBENCH_QEMU_AARCH64 NAMES qemu-aarch64 qemu-aarch64-static)
if(INSTBENCH_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${INSTBENCH_QEMU_AARCH64})
endif()
