# xattn_discover_tests(TARGET t PREFIX p LABELS l [VARS KEY=value ...]
#                      [ENVIRONMENT e...] [TIMEOUT s])
#
# ctest's tests of a test binary come from the binary itself, so that a test
# cannot be written in the binary and forgotten in CMake (or the reverse).
# After every build of `t`, `t --list` prints one line per test:
#     NAME [ARG...]
# and ctest runs `t ARG...` (just `t NAME` when no ARG is given) as test
# <PREFIX><NAME> with the given labels. An ARG may hold @KEY@ placeholders,
# replaced by the VARS given here (paths known only to the build). The list
# is read at test time (TEST_INCLUDE_FILES), so it is always the one of the
# binary that runs; a binary that cannot list fails its build.
set(_XATTN_DISCOVER_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/xattn_discover_run.cmake)

function(xattn_discover_tests)
  cmake_parse_arguments(D "" "TARGET;PREFIX;TIMEOUT" "LABELS;VARS;ENVIRONMENT" ${ARGN})
  set(_dir ${CMAKE_CURRENT_BINARY_DIR}/discovered)
  set(_params ${_dir}/${D_TARGET}_params.cmake)
  set(_tests ${_dir}/${D_TARGET}_tests.cmake)
  set(_include ${_dir}/${D_TARGET}_include.cmake)
  # the parameters, written once at configure time (lists survive intact)
  set(_p "set(D_PREFIX [==[${D_PREFIX}]==])\nset(D_LABELS [==[${D_LABELS}]==])\n")
  string(APPEND _p "set(D_VARS [==[${D_VARS}]==])\nset(D_ENVIRONMENT [==[${D_ENVIRONMENT}]==])\n")
  string(APPEND _p "set(D_TIMEOUT [==[${D_TIMEOUT}]==])\nset(D_OUT [==[${_tests}]==])\n")
  file(WRITE ${_params} "${_p}")
  add_custom_command(TARGET ${D_TARGET} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:${D_TARGET}> -DPARAMS=${_params} -P ${_XATTN_DISCOVER_SCRIPT}
    COMMENT "ctest: listing the tests of ${D_TARGET}" VERBATIM)
  # before the first build there is nothing to list: one failing test says so
  file(WRITE ${_include}
       "if(EXISTS [==[${_tests}]==])\n  include([==[${_tests}]==])\nelse()\n"
       "  add_test(${D_PREFIX}NOT_BUILT ${CMAKE_COMMAND} -E false)\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${_include})
endfunction()
