# Cross build for arm64 (aarch64) with Debian's cross toolchain (crossbuild-essential-arm64)
# against an unpacked arm64 sysroot (scripts/arm64-sysroot):
#   cmake -S . -B build-arm64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-linux-gnu.cmake \
#     -DIMGTOOL_CUDA=OFF [-DIMGTOOL_ARM64_SYSROOT=DIR]
# Binaries run under qemu-aarch64 -L <sysroot> (trainer/README.md, "arm64").
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

set(IMGTOOL_ARM64_SYSROOT "${CMAKE_CURRENT_LIST_DIR}/../.cache/arm64-sysroot" CACHE PATH
  "arm64 sysroot (scripts/arm64-sysroot)")
# try_compile projects read this file again: hand them the same folder.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES IMGTOOL_ARM64_SYSROOT)
get_filename_component(CMAKE_SYSROOT "${IMGTOOL_ARM64_SYSROOT}" ABSOLUTE)
if(NOT EXISTS "${CMAKE_SYSROOT}/usr/include/aarch64-linux-gnu")
  message(FATAL_ERROR "no arm64 sysroot at ${CMAKE_SYSROOT}: run scripts/arm64-sysroot")
endif()

# Libraries and headers only from the sysroot; programs (pkg-config, ...) from the host.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${CMAKE_SYSROOT}")
set(ENV{PKG_CONFIG_LIBDIR} "${CMAKE_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${CMAKE_SYSROOT}/usr/share/pkgconfig")

# The sysroot's shared libraries need others (libgloo -> libibverbs ...), found by ld here.
set(arm64_libdirs "${CMAKE_SYSROOT}/usr/lib/aarch64-linux-gnu:${CMAKE_SYSROOT}/lib/aarch64-linux-gnu:${CMAKE_SYSROOT}/usr/lib")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,-rpath-link,${arm64_libdirs}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-Wl,-rpath-link,${arm64_libdirs}")

# gtest_discover_tests runs each test binary at build time to list its tests.
find_program(IMGTOOL_QEMU_AARCH64 qemu-aarch64)
if(IMGTOOL_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${IMGTOOL_QEMU_AARCH64};-L;${CMAKE_SYSROOT}")
endif()
