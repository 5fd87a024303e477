#----------------------------------------------------------------
# Generated CMake target import file for configuration "RelWithDebInfo".
#----------------------------------------------------------------

# Commands may need to know the format version.
set(CMAKE_IMPORT_FILE_VERSION 1)

# Import target "threadtime::threadtime" for configuration "RelWithDebInfo"
set_property(TARGET threadtime::threadtime APPEND PROPERTY IMPORTED_CONFIGURATIONS RELWITHDEBINFO)
set_target_properties(threadtime::threadtime PROPERTIES
  IMPORTED_LOCATION_RELWITHDEBINFO "${_IMPORT_PREFIX}/lib/libthreadtime.so.0.1.0"
  IMPORTED_SONAME_RELWITHDEBINFO "libthreadtime.so.0"
  )

list(APPEND _cmake_import_check_targets threadtime::threadtime )
list(APPEND _cmake_import_check_files_for_threadtime::threadtime "${_IMPORT_PREFIX}/lib/libthreadtime.so.0.1.0" )

# Import target "threadtime::threadtime_static" for configuration "RelWithDebInfo"
set_property(TARGET threadtime::threadtime_static APPEND PROPERTY IMPORTED_CONFIGURATIONS RELWITHDEBINFO)
set_target_properties(threadtime::threadtime_static PROPERTIES
  IMPORTED_LINK_INTERFACE_LANGUAGES_RELWITHDEBINFO "C"
  IMPORTED_LOCATION_RELWITHDEBINFO "${_IMPORT_PREFIX}/lib/libthreadtime.a"
  )

list(APPEND _cmake_import_check_targets threadtime::threadtime_static )
list(APPEND _cmake_import_check_files_for_threadtime::threadtime_static "${_IMPORT_PREFIX}/lib/libthreadtime.a" )

# Commands beyond this point should not need to know the version.
set(CMAKE_IMPORT_FILE_VERSION)
