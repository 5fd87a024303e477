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
# zig is $TT_ZIG if set, else $TT_ZIG_DIR/bin/zig (default
# /opt/threadtime-zig, where .ci/deps.d/natives.sh installs it), else the
# first zig on PATH.
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

if(DEFINED ENV{TT_ZIG})
  set(_tt_zig "$ENV{TT_ZIG}")
elseif(DEFINED ENV{TT_ZIG_DIR})
  set(_tt_zig "$ENV{TT_ZIG_DIR}/bin/zig")
else()
  set(_tt_zig "/opt/threadtime-zig/bin/zig")
endif()
if(NOT EXISTS "${_tt_zig}")
  find_program(_tt_zig_on_path zig)
  if(NOT _tt_zig_on_path)
    message(FATAL_ERROR "zig.cmake: no zig at ${_tt_zig} nor on PATH; scripts/deps.sh installs it "
                        "(.ci/deps.d/natives.sh), or set TT_ZIG to one")
  endif()
  set(_tt_zig "${_tt_zig_on_path}")
endif()

# A list: the compiler and the arguments every call needs (CMake 3.19+).
set(CMAKE_C_COMPILER "${_tt_zig}" cc -target "${TT_ZIG_TARGET}")
set(CMAKE_CXX_COMPILER "${_tt_zig}" c++ -target "${TT_ZIG_TARGET}")

# Another arch's test programs run under qemu-user, with the arch's glibc
# from Debian's libc6-<arch>-cross (.ci/deps.d/natives.apt): ctest prefixes
# each test command with this.
cmake_host_system_information(RESULT _tt_host QUERY OS_PLATFORM)
if(NOT CMAKE_SYSTEM_PROCESSOR STREQUAL _tt_host)
  set(CMAKE_CROSSCOMPILING_EMULATOR "qemu-${CMAKE_SYSTEM_PROCESSOR}-static;-L;/usr/${CMAKE_SYSTEM_PROCESSOR}-linux-gnu")
endif()
