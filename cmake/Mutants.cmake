# Mutation testing of the core (docs/mutation.md, mutation/run_mutants.sh).
#
# A mutant is a plausible bug in one core/*.cc file, kept as data in
# mutation/mutants/<name>.mutant:
#
#   # comment lines start with '#'
#   file: core/packing_aware.cc
#   description: one line saying what the bug is
#   <<<<<<< original
#   exact text of the core, one or more whole or partial lines
#   =======
#   the text that replaces it (may be empty)
#   >>>>>>> mutant
#
# A file may hold several original/mutant blocks; each original must occur
# exactly once in the target file, so a mutant cannot rot silently when the
# core changes: configuring fails and names the mutant and the file.
#
# Configuring with -DDCPSCHED_MUTANT=<name> compiles dcpsched_core with a
# mutated copy of the target file, ${CMAKE_BINARY_DIR}/mutant/core/<file>.cc,
# instead of the original; includes still resolve to the real headers. Only
# that copy gets the definition DCPSCHED_MUTANT_NAME="<name>". With
# DCPSCHED_MUTANT empty (the default) nothing changes.
#
# Included by the top-level CMakeLists.txt right after DCPSCHED_CORE_SOURCES
# is globbed, and (for its functions only) by mutation/check_mutants.cmake in
# script mode.

# Parses the mutant file `path` into variables named <prefix>_...:
#   <prefix>_ERROR        empty, or what is wrong with the file
#   <prefix>_FILE         the target, relative to the source dir (core/x.cc)
#   <prefix>_DESCRIPTION  the one-line description
#   <prefix>_BLOCKS       the number of original/mutant blocks
#   <prefix>_ORIGINAL_<i>, <prefix>_MUTANT_<i>   block i, from 1
function(dcpsched_parse_mutant path prefix)
  set(error "")
  set(target "")
  set(description "")
  set(blocks 0)
  if(NOT EXISTS "${path}")
    set(${prefix}_ERROR "mutant file ${path} does not exist" PARENT_SCOPE)
    return()
  endif()
  file(READ "${path}" text)
  string(FIND "${text}" "<<<<<<< original\n" first_block)
  if(first_block EQUAL -1)
    set(${prefix}_ERROR "${path}: no '<<<<<<< original' block" PARENT_SCOPE)
    return()
  endif()
  string(SUBSTRING "${text}" 0 ${first_block} header)
  string(SUBSTRING "${text}" ${first_block} -1 rest)

  # Header: "file:" and "description:" lines, comments and blank lines. Read
  # line by line without CMake lists, which would split at ';'.
  while(NOT header STREQUAL "")
    string(FIND "${header}" "\n" line_end)
    if(line_end EQUAL -1)
      set(line "${header}")
      set(header "")
    else()
      string(SUBSTRING "${header}" 0 ${line_end} line)
      math(EXPR line_end "${line_end} + 1")
      string(SUBSTRING "${header}" ${line_end} -1 header)
    endif()
    if(line MATCHES "^file: *(.*[^ ]) *$")
      set(target "${CMAKE_MATCH_1}")
    elseif(line MATCHES "^description: *(.*[^ ]) *$")
      set(description "${CMAKE_MATCH_1}")
    elseif(NOT line MATCHES "^(#.*| *)$")
      set(error "${path}: unexpected header line '${line}'")
    endif()
  endwhile()
  if(error STREQUAL "" AND target STREQUAL "")
    set(error "${path}: no 'file:' line")
  endif()
  if(error STREQUAL "" AND description STREQUAL "")
    set(error "${path}: no 'description:' line")
  endif()
  if(error STREQUAL "" AND NOT target MATCHES "^core/[a-z0-9_]+\\.cc$")
    set(error "${path}: file '${target}' is not a core/*.cc file")
  endif()

  # Blocks: "<<<<<<< original\n" A "\n=======\n" B "\n>>>>>>> mutant", where
  # B may be empty ("=======\n>>>>>>> mutant").
  while(error STREQUAL "" AND NOT rest MATCHES "^[ \n]*$")
    string(REGEX REPLACE "^[ \n]+" "" rest "${rest}")
    string(FIND "${rest}" "<<<<<<< original\n" start)
    if(NOT start EQUAL 0)
      set(error "${path}: text between blocks; expected '<<<<<<< original'")
      break()
    endif()
    string(LENGTH "<<<<<<< original\n" marker_length)
    string(SUBSTRING "${rest}" ${marker_length} -1 rest)
    string(FIND "${rest}" "\n=======\n" middle)
    if(middle LESS 1)
      set(error "${path}: block ${blocks}+1 has no '=======' line after a non-empty original")
      break()
    endif()
    string(SUBSTRING "${rest}" 0 ${middle} original)
    math(EXPR after_middle "${middle} + 9")
    string(SUBSTRING "${rest}" ${after_middle} -1 rest)
    if(rest MATCHES "^>>>>>>> mutant")
      set(replacement "")
      string(LENGTH ">>>>>>> mutant" end_length)
      string(SUBSTRING "${rest}" ${end_length} -1 rest)
    else()
      string(FIND "${rest}" "\n>>>>>>> mutant" end)
      if(end EQUAL -1)
        set(error "${path}: a block has no '>>>>>>> mutant' line")
        break()
      endif()
      string(SUBSTRING "${rest}" 0 ${end} replacement)
      math(EXPR after_end "${end} + 15")
      string(SUBSTRING "${rest}" ${after_end} -1 rest)
    endif()
    if(original STREQUAL replacement)
      set(error "${path}: a block's mutant text equals its original")
      break()
    endif()
    math(EXPR blocks "${blocks} + 1")
    set(${prefix}_ORIGINAL_${blocks} "${original}" PARENT_SCOPE)
    set(${prefix}_MUTANT_${blocks} "${replacement}" PARENT_SCOPE)
  endwhile()

  set(${prefix}_ERROR "${error}" PARENT_SCOPE)
  set(${prefix}_FILE "${target}" PARENT_SCOPE)
  set(${prefix}_DESCRIPTION "${description}" PARENT_SCOPE)
  set(${prefix}_BLOCKS ${blocks} PARENT_SCOPE)
endfunction()

# Applies mutant `name` (mutation/mutants/<name>.mutant under `source_dir`):
# sets <prefix>_ERROR (empty on success), <prefix>_FILE (as in
# dcpsched_parse_mutant), <prefix>_MUTANT_FILE (the mutant file's path) and
# <prefix>_TEXT (the mutated target file).
function(dcpsched_apply_mutant source_dir name prefix)
  set(mutant_file "${source_dir}/mutation/mutants/${name}.mutant")
  set(${prefix}_MUTANT_FILE "${mutant_file}" PARENT_SCOPE)
  set(${prefix}_TEXT "" PARENT_SCOPE)
  if(NOT name MATCHES "^[a-z0-9_]+$")
    set(${prefix}_ERROR "mutant name '${name}' is not snake_case" PARENT_SCOPE)
    return()
  endif()
  dcpsched_parse_mutant("${mutant_file}" parsed)
  set(${prefix}_FILE "${parsed_FILE}" PARENT_SCOPE)
  if(NOT parsed_ERROR STREQUAL "")
    set(${prefix}_ERROR "mutant ${name}: ${parsed_ERROR}" PARENT_SCOPE)
    return()
  endif()
  set(target "${source_dir}/${parsed_FILE}")
  if(NOT EXISTS "${target}")
    set(${prefix}_ERROR "mutant ${name}: its file ${parsed_FILE} does not exist" PARENT_SCOPE)
    return()
  endif()
  file(READ "${target}" pristine)
  string(LENGTH "${pristine}" pristine_length)
  set(text "${pristine}")
  foreach(i RANGE 1 ${parsed_BLOCKS})
    set(original "${parsed_ORIGINAL_${i}}")
    # Occurrences of `original` in the unmutated file: count by removal.
    string(REPLACE "${original}" "" stripped "${pristine}")
    string(LENGTH "${stripped}" stripped_length)
    string(LENGTH "${original}" original_length)
    math(EXPR occurrences "(${pristine_length} - ${stripped_length}) / ${original_length}")
    if(NOT occurrences EQUAL 1)
      string(REGEX REPLACE "\n.*" " ..." first_line "${original}")
      set(${prefix}_ERROR "mutant ${name}: block ${i}'s original text occurs ${occurrences} times in ${parsed_FILE}, not exactly once (it starts '${first_line}'); update mutation/mutants/${name}.mutant to the current core" PARENT_SCOPE)
      return()
    endif()
    string(REPLACE "${original}" "${parsed_MUTANT_${i}}" text "${text}")
  endforeach()
  set(${prefix}_ERROR "" PARENT_SCOPE)
  set(${prefix}_TEXT "${text}" PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE)
  return()
endif()

set(DCPSCHED_MUTANT "" CACHE STRING
    "Mutation testing: build the core with mutation/mutants/<name>.mutant applied (empty: none)")
if(NOT DCPSCHED_MUTANT STREQUAL "")
  dcpsched_apply_mutant("${CMAKE_CURRENT_SOURCE_DIR}" "${DCPSCHED_MUTANT}" mutant)
  # Edits to the mutant file or to the core file re-run configure.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${mutant_MUTANT_FILE}")
  if(NOT mutant_FILE STREQUAL "" AND EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/${mutant_FILE}")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
                 "${CMAKE_CURRENT_SOURCE_DIR}/${mutant_FILE}")
  endif()
  if(NOT mutant_ERROR STREQUAL "")
    file(GLOB known_mutants "${CMAKE_CURRENT_SOURCE_DIR}/mutation/mutants/*.mutant")
    list(TRANSFORM known_mutants REPLACE ".*/([^/]*)\\.mutant$" "\\1")
    list(JOIN known_mutants ", " known_mutants)
    message(FATAL_ERROR "DCPSCHED_MUTANT: ${mutant_ERROR}\nKnown mutants: ${known_mutants}")
  endif()
  set(mutant_copy "${CMAKE_BINARY_DIR}/mutant/${mutant_FILE}")
  # Written only when it changes, so reconfiguring does not recompile.
  file(WRITE "${mutant_copy}.new" "${mutant_TEXT}")
  file(COPY_FILE "${mutant_copy}.new" "${mutant_copy}" ONLY_IF_DIFFERENT)
  file(REMOVE "${mutant_copy}.new")
  list(REMOVE_ITEM DCPSCHED_CORE_SOURCES "${CMAKE_CURRENT_SOURCE_DIR}/${mutant_FILE}")
  list(APPEND DCPSCHED_CORE_SOURCES "${mutant_copy}")
  set_source_files_properties("${mutant_copy}" PROPERTIES
    COMPILE_DEFINITIONS "DCPSCHED_MUTANT_NAME=\"${DCPSCHED_MUTANT}\"")
  message(STATUS "dcpsched: MUTANT BUILD: ${DCPSCHED_MUTANT} (${mutant_FILE} -> ${mutant_copy})")
endif()

# Mutant schemata (generated mutants, docs/mutation.md): with
# -DDCPSCHED_MUTANT_SCHEMATA=<dir>, a directory written by
# `mutation/generate_mutants.py --out <dir>`, dcpsched_core is compiled from
# the rewritten copies <dir>/core/* of every core file that has mutants, plus
# the run-time switch (mutation/schemata/runtime.cc) and the id table
# (<dir>/mutant_table.cc). <dir> comes first on the include path, so every
# target sees the rewritten headers too. The live mutant is chosen at run
# time by DCPSCHED_MUTANT=<id>; unset, the build behaves as the original.
# Empty (the default): nothing changes.
set(DCPSCHED_MUTANT_SCHEMATA "" CACHE PATH
    "Mutation testing: build the core from the mutant schemata in this directory (empty: none)")
if(NOT DCPSCHED_MUTANT_SCHEMATA STREQUAL "")
  if(NOT DCPSCHED_MUTANT STREQUAL "")
    message(FATAL_ERROR "DCPSCHED_MUTANT and DCPSCHED_MUTANT_SCHEMATA exclude each other")
  endif()
  if(NOT EXISTS "${DCPSCHED_MUTANT_SCHEMATA}/mutant_table.cc")
    message(FATAL_ERROR "DCPSCHED_MUTANT_SCHEMATA: ${DCPSCHED_MUTANT_SCHEMATA} holds no "
      "mutant_table.cc; write it with mutation/generate_mutants.py --out ${DCPSCHED_MUTANT_SCHEMATA}")
  endif()
  set(schemata_sources "")
  foreach(source IN LISTS DCPSCHED_CORE_SOURCES)
    file(RELATIVE_PATH relative "${CMAKE_CURRENT_SOURCE_DIR}" "${source}")
    if(EXISTS "${DCPSCHED_MUTANT_SCHEMATA}/${relative}")
      list(APPEND schemata_sources "${DCPSCHED_MUTANT_SCHEMATA}/${relative}")
    else()
      list(APPEND schemata_sources "${source}")
    endif()
  endforeach()
  set(DCPSCHED_CORE_SOURCES ${schemata_sources}
      "${DCPSCHED_MUTANT_SCHEMATA}/mutant_table.cc"
      "${CMAKE_CURRENT_SOURCE_DIR}/mutation/schemata/runtime.cc")
  message(STATUS "dcpsched: MUTANT SCHEMATA BUILD from ${DCPSCHED_MUTANT_SCHEMATA}")
endif()
