# Toolchain file for the shipped natives on x86_64 (see zig.cmake).
set(TT_ZIG_ARCH x86_64)
include(${CMAKE_CURRENT_LIST_DIR}/zig.cmake)
