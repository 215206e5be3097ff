# Helpers of the tests of the `staticformer` command (tools/staticformer_test.cmake,
# tools/run_test.cmake): include() it after setting STATICFORMER, the program to run.

# Runs staticformer ARGN; sets sf_rc, sf_out, sf_err. Where the caller sets sf_timeout (seconds),
# a run that takes longer is stopped and sf_rc says so (it equals no exit status).
function(sf)
  set(timeout)
  if(DEFINED sf_timeout)
    set(timeout TIMEOUT ${sf_timeout})
  endif()
  execute_process(COMMAND "${STATICFORMER}" ${ARGN} ${timeout} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(sf_rc "${rc}" PARENT_SCOPE)
  set(sf_out "${out}" PARENT_SCOPE)
  set(sf_err "${err}" PARENT_SCOPE)
endfunction()

# A run that must fail with exit status `status` and a message matching `regex` on stderr; sets
# sf_out and sf_err, for the caller's further checks.
function(sf_error status regex)
  sf(${ARGN})
  if(NOT sf_rc EQUAL status)
    message(FATAL_ERROR "staticformer ${ARGN}: exit status ${sf_rc}, expected ${status}\n${sf_out}\n${sf_err}")
  endif()
  if(NOT sf_err MATCHES "${regex}")
    message(FATAL_ERROR "staticformer ${ARGN}: the message does not match '${regex}':\n${sf_err}")
  endif()
  message(STATUS "ok (refused): staticformer ${ARGN}\n  ${sf_err}")
  set(sf_out "${sf_out}" PARENT_SCOPE)
  set(sf_err "${sf_err}" PARENT_SCOPE)
endfunction()
