# The agent library, defined once for the two builds that make it:
# jvmti/CMakeLists.txt (the agent's own tests and benchmark) and
# java/threadtime/native (the copy the threadtime JAR carries).
#   tt_vthreads_agent(JDK_HOME)  defines the target threadtime_vthreads
# JDK_HOME must be a JDK 21 or newer: its jvmti.h has the virtual-thread
# API. Needs TT_ROOT (the repository) and the core's threadtime_static.
function(tt_vthreads_agent jdk_home)
  set(header "${jdk_home}/include/jvmti.h")
  if(NOT EXISTS "${header}")
    message(FATAL_ERROR "the virtual-thread agent needs a JDK 21+: no include/jvmti.h under '${jdk_home}'")
  endif()
  file(STRINGS "${header}" has_21 REGEX "JVMTI_VERSION_21")
  if(NOT has_21)
    message(FATAL_ERROR "the virtual-thread agent needs the jvmti.h of a JDK 21+; '${header}' is older")
  endif()
  set(dir "${CMAKE_CURRENT_FUNCTION_LIST_DIR}")
  add_library(threadtime_vthreads SHARED ${dir}/account.c ${dir}/agent.c ${dir}/clock.c)
  # SYSTEM: jvmti.h itself does not pass -Wstrict-prototypes.
  target_include_directories(threadtime_vthreads SYSTEM PRIVATE
    "${jdk_home}/include" "${jdk_home}/include/linux")
  # The core's public headers and its calibration (event_internal.h).
  target_include_directories(threadtime_vthreads PRIVATE "${TT_ROOT}/include" "${TT_ROOT}/src")
  target_compile_definitions(threadtime_vthreads PRIVATE _GNU_SOURCE)
  target_link_libraries(threadtime_vthreads PRIVATE threadtime_static)
  set_target_properties(threadtime_vthreads PROPERTIES
    C_VISIBILITY_PRESET hidden
    POSITION_INDEPENDENT_CODE ON
    LINK_DEPENDS "${dir}/exports.map")
  target_link_options(threadtime_vthreads PRIVATE
    "-Wl,--version-script=${dir}/exports.map" -Wl,--no-undefined)
endfunction()
