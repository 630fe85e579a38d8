# Shared by the package tests (cmake -P scripts); PACKAGE_TEST names the
# calling script in failure messages.
#
# step(WHAT COMMAND...): runs the command, echoes its output to the test log,
# fails the test with its output and errors when it exits non-zero, and keeps
# its standard output in `last_output` for expect_output.
function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${PACKAGE_TEST}: ${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

# expect_output(WHAT NEEDLE...): fails the test unless the last step printed every needle.
function(expect_output what)
  foreach(needle ${ARGN})
    string(FIND "${last_output}" "${needle}" at)
    if(at LESS 0)
      message(FATAL_ERROR "${PACKAGE_TEST}: ${what} did not print '${needle}':\n${last_output}")
    endif()
  endforeach()
endfunction()
