# Toolchain file for the shipped natives on aarch64 (see zig.cmake).
set(TT_ZIG_ARCH aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/zig.cmake)
