# ctest python_installed_module: `cmake --install` the build into a scratch
# prefix, then import dcpsched from MODULE_DIR under that prefix (and from
# nowhere else) and schedule one batch with it.
foreach(variable DCPSCHED_BUILD_DIR WORK_DIR MODULE_DIR PYTHON)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "installed_module_test.cmake: pass -D${variable}=...")
  endif()
endforeach()

set(prefix "${WORK_DIR}/prefix")
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${DCPSCHED_BUILD_DIR}" --prefix "${prefix}"
                RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "installed module test: cmake --install failed:\n${output}")
endif()

# Run from the scratch directory: python puts the working directory first on
# sys.path, and the build's own module must not be the one found.
set(ENV{PYTHONPATH} "${prefix}/${MODULE_DIR}")
execute_process(
  WORKING_DIRECTORY "${WORK_DIR}"
  COMMAND "${PYTHON}" -c
    "import dcpsched; print(dcpsched.__file__); print(dcpsched.schedule_dynamic_cp([(7, 5000), (8, 300), (9, 1200)], total_gpus=8, max_seq_len_per_rank=2048))"
  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE error)
set(expected_output
  "${prefix}/${MODULE_DIR}/dcpsched.*\n\\[\\[\\[7\\], \\[7\\], \\[7\\], \\[7\\], \\[9, 8\\], \\[9, 8\\], \\[9, 8\\], \\[9, 8\\]\\]\\]\n$")
if(NOT result EQUAL 0 OR NOT output MATCHES "^${expected_output}")
  message(FATAL_ERROR "installed module test: importing dcpsched from "
    "${prefix}/${MODULE_DIR} exited ${result} and printed\n${output}${error}\n"
    "expected the module's path under the prefix, then the schedule "
    "[[[7], [7], [7], [7], [9, 8], [9, 8], [9, 8], [9, 8]]]")
endif()
message(STATUS "installed module test: ${output}")
file(REMOVE_RECURSE "${WORK_DIR}")
