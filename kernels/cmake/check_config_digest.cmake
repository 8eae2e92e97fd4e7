# Build-time check (cmake -P) that a multi-CPU config header (xattn-tune merge)
# was tuned on these kernels: its XATTN_CONFIG_KERNEL_DIGEST must be the prefix of
# the digest tune/digest.cmake computes for the kernel sources with the default
# header (what every fleet machine's tuning build used). Headers without the
# define (hand default, one machine's tuned header) pass.
#   -DSRC=<source root> -DHEADER=<config header> -DOUT=<scratch digest file>
file(STRINGS "${HEADER}" _line REGEX "^#define XATTN_CONFIG_KERNEL_DIGEST")
if(NOT _line)
  return()
endif()
if(NOT _line MATCHES "\"([0-9a-f]+)\"")
  message(FATAL_ERROR "XATTN_CONFIG_HEADER ${HEADER}: XATTN_CONFIG_KERNEL_DIGEST is not a quoted hex digest")
endif()
set(_want "${CMAKE_MATCH_1}")
set(CONFIG_HEADER "${SRC}/kernels/config/xattn_config_default.h")
include("${SRC}/tune/digest.cmake") # sets `digest`
string(LENGTH "${_want}" _n)
string(SUBSTRING "${digest}" 0 ${_n} _have)
if(NOT _have STREQUAL _want)
  string(CONCAT _msg "XATTN_CONFIG_HEADER ${HEADER}: merged from tunings of kernels sha256:${_want}, but these kernels are "
           "sha256:${_have}; build the commit the header's provenance names or tune and merge again at this one")
  # the line verbatim (message() reflows long text), then the failure
  execute_process(COMMAND ${CMAKE_COMMAND} -E echo "${_msg}")
  message(FATAL_ERROR "config header refused (the line above)")
endif()
