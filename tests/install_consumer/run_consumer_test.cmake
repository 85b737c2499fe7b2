# The install test (ctest: install_consumer, label "install"), run as
#   cmake -DDCPSCHED_BUILD_DIR=... -DCONSUMER_SOURCE_DIR=... -DWORK_DIR=...
#         -DCONSUMER_GENERATOR=... -DCONSUMER_MAKE_PROGRAM=...
#         -DCONSUMER_CXX_COMPILER=... -DCONSUMER_BUILD_TYPE=...
#         -DPROJECT_VERSION=... -P run_consumer_test.cmake
# 1. `cmake --install DCPSCHED_BUILD_DIR --prefix WORK_DIR/prefix`, and the
#    headers, library, program and package files are where they belong;
# 2. the package's version file accepts 0.<minor> and refuses the next minor;
# 3. tests/install_consumer is configured with CMAKE_PREFIX_PATH set to the
#    prefix (nothing else points at this project), built and run, and its
#    output is exactly what the library must answer.
# Any failure stops with a message naming the step and its output.
cmake_minimum_required(VERSION 3.25)

foreach(variable DCPSCHED_BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR
                 CONSUMER_GENERATOR CONSUMER_CXX_COMPILER PROJECT_VERSION)
  if(NOT DEFINED ${variable} OR "${${variable}}" STREQUAL "")
    message(FATAL_ERROR "run_consumer_test.cmake: pass -D${variable}=...")
  endif()
endforeach()

set(prefix "${WORK_DIR}/prefix")
set(consumer_build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${WORK_DIR}")

function(run_step name)
  execute_process(COMMAND ${ARGN}
                  RESULT_VARIABLE result
                  OUTPUT_VARIABLE output
                  ERROR_VARIABLE error)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "install test: ${name} failed (${result}):\n"
                        "${ARGN}\n${output}\n${error}")
  endif()
endfunction()

# 1. Install.
run_step("cmake --install" "${CMAKE_COMMAND}" --install "${DCPSCHED_BUILD_DIR}"
         --prefix "${prefix}")
foreach(installed
        include/dcpsched/core/types.h
        include/dcpsched/core/packing_aware.h
        include/dcpsched/core/checker.h
        lib/libdcpsched_core.a
        bin/dcpsched
        lib/cmake/dcpsched/dcpschedConfig.cmake
        lib/cmake/dcpsched/dcpschedConfigVersion.cmake
        lib/cmake/dcpsched/dcpschedTargets.cmake)
  if(NOT EXISTS "${prefix}/${installed}")
    message(FATAL_ERROR "install test: ${prefix}/${installed} was not installed")
  endif()
endforeach()

# 2. Version compatibility (SameMinorVersion).
string(REGEX MATCH "^([0-9]+)\\.([0-9]+)" _ "${PROJECT_VERSION}")
set(major "${CMAKE_MATCH_1}")
set(minor "${CMAKE_MATCH_2}")
math(EXPR next_minor "${minor} + 1")
foreach(request_and_expected "${major}.${minor};TRUE" "${major}.${next_minor};FALSE")
  list(GET request_and_expected 0 PACKAGE_FIND_VERSION)
  list(GET request_and_expected 1 expected)
  string(REPLACE "." ";" parts "${PACKAGE_FIND_VERSION}")
  list(GET parts 0 PACKAGE_FIND_VERSION_MAJOR)
  list(GET parts 1 PACKAGE_FIND_VERSION_MINOR)
  set(PACKAGE_FIND_VERSION_PATCH 0)
  set(PACKAGE_FIND_VERSION_COUNT 2)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
  include("${prefix}/lib/cmake/dcpsched/dcpschedConfigVersion.cmake")
  if(NOT PACKAGE_VERSION_COMPATIBLE STREQUAL expected)
    message(FATAL_ERROR "install test: dcpsched ${PACKAGE_VERSION} answers "
      "compatible=${PACKAGE_VERSION_COMPATIBLE} to find_package(dcpsched "
      "${PACKAGE_FIND_VERSION}); expected ${expected}")
  endif()
endforeach()

# 3. Configure, build and run the consumer.
set(configure_arguments
  -S "${CONSUMER_SOURCE_DIR}" -B "${consumer_build}"
  -G "${CONSUMER_GENERATOR}"
  "-DCMAKE_CXX_COMPILER=${CONSUMER_CXX_COMPILER}"
  "-DCMAKE_PREFIX_PATH=${prefix}")
if(DEFINED CONSUMER_MAKE_PROGRAM AND NOT CONSUMER_MAKE_PROGRAM STREQUAL "")
  list(APPEND configure_arguments "-DCMAKE_MAKE_PROGRAM=${CONSUMER_MAKE_PROGRAM}")
endif()
if(DEFINED CONSUMER_BUILD_TYPE AND NOT CONSUMER_BUILD_TYPE STREQUAL "")
  list(APPEND configure_arguments "-DCMAKE_BUILD_TYPE=${CONSUMER_BUILD_TYPE}")
endif()
run_step("configuring the consumer" "${CMAKE_COMMAND}" ${configure_arguments})
run_step("building the consumer" "${CMAKE_COMMAND}" --build "${consumer_build}")

execute_process(COMMAND "${consumer_build}/dcpsched_consumer"
                RESULT_VARIABLE result
                OUTPUT_VARIABLE output
                ERROR_VARIABLE error)
set(expected "dcpsched consumer: 2 microbatches, valid\n")
if(NOT result EQUAL 0 OR NOT output STREQUAL expected)
  message(FATAL_ERROR "install test: the consumer exited ${result} and "
    "printed\n${output}${error}\nexpected exit 0 and\n${expected}")
endif()
message(STATUS "install test: ${output}")
file(REMOVE_RECURSE "${WORK_DIR}")
