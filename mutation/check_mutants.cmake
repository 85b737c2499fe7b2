# Checks every mutation/mutants/*.mutant (ctest test mutant_files):
# it parses, names a core/*.cc file, and each original text occurs exactly
# once in that file. Fails listing every broken mutant, so a core change
# that makes a mutant stale is noticed on the next ctest run.
#
#   cmake -DDCPSCHED_SOURCE_DIR=<repo> -P mutation/check_mutants.cmake
if(NOT DCPSCHED_SOURCE_DIR)
  get_filename_component(DCPSCHED_SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
endif()
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/Mutants.cmake")

file(GLOB mutant_files "${DCPSCHED_SOURCE_DIR}/mutation/mutants/*.mutant")
list(LENGTH mutant_files count)
if(count EQUAL 0)
  message(FATAL_ERROR "no mutants in ${DCPSCHED_SOURCE_DIR}/mutation/mutants")
endif()
set(errors "")
foreach(mutant_file IN LISTS mutant_files)
  get_filename_component(name "${mutant_file}" NAME_WE)
  dcpsched_apply_mutant("${DCPSCHED_SOURCE_DIR}" "${name}" mutant)
  if(mutant_ERROR STREQUAL "")
    message(STATUS "ok    ${name} (${mutant_FILE})")
  else()
    message(STATUS "FAIL  ${mutant_ERROR}")
    string(APPEND errors "${mutant_ERROR}\n")
  endif()
endforeach()
if(NOT errors STREQUAL "")
  message(FATAL_ERROR "stale or malformed mutants:\n${errors}")
endif()
message(STATUS "${count} mutants: every one parses and applies to exactly one place")
