# The toolchain of the shipped natives: zig's clang for
# <arch>-linux-gnu.<glibc>, where the glibc version is the oldest the output
# may need (zig links against stubs of that version, so no sysroot). Not
# used directly: cmake/zig-x86_64.cmake and cmake/zig-aarch64.cmake set
# TT_ZIG_ARCH and include this file. docs/platforms.md says why zig.
#
# TT_ZIG_GLIBC (default 2.17, the floor) may name a newer glibc: the aarch64
# test build links the test programs, which call glibc 2.30's gettid(),
# against the glibc that runs them under qemu.
#
# Which zig: scripts/zig.sh says.
if(NOT TT_ZIG_GLIBC)
  set(TT_ZIG_GLIBC 2.17)
endif()
if(NOT TT_ZIG_GLIBC MATCHES "^2\\.[0-9]+$")
  message(FATAL_ERROR "zig.cmake: TT_ZIG_GLIBC='${TT_ZIG_GLIBC}' is not a glibc version such as 2.17")
endif()
# try_compile projects read this file again: they need the version too.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TT_ZIG_GLIBC)
set(TT_ZIG_TARGET "${TT_ZIG_ARCH}-linux-gnu.${TT_ZIG_GLIBC}")
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR "${TT_ZIG_ARCH}")

execute_process(COMMAND "${CMAKE_CURRENT_LIST_DIR}/../scripts/zig.sh" --path
                OUTPUT_VARIABLE _tt_zig OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_VARIABLE _tt_zig_error RESULT_VARIABLE _tt_zig_rc)
if(NOT _tt_zig_rc EQUAL 0)
  message(FATAL_ERROR "zig.cmake: ${_tt_zig_error}")
endif()

# A list: the compiler and the arguments every call needs (CMake 3.19+).
set(CMAKE_C_COMPILER "${_tt_zig}" cc -target "${TT_ZIG_TARGET}")
set(CMAKE_CXX_COMPILER "${_tt_zig}" c++ -target "${TT_ZIG_TARGET}")
# CMake's compiler checks compile without linking: linking a C++ check
# program makes zig build libc++ for the target first (minutes), which only
# a build with C++ targets (the tests' header check) needs.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

# Another arch's test programs run under qemu-user, with the arch's glibc
# from Debian's libc6-<arch>-cross (.ci/deps.d/natives.apt): ctest prefixes
# each test command with this.
cmake_host_system_information(RESULT _tt_host QUERY OS_PLATFORM)
if(NOT CMAKE_SYSTEM_PROCESSOR STREQUAL _tt_host)
  set(CMAKE_CROSSCOMPILING_EMULATOR "qemu-${CMAKE_SYSTEM_PROCESSOR}-static;-L;/usr/${CMAKE_SYSTEM_PROCESSOR}-linux-gnu")
endif()
