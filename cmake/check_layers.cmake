# Fails when a folder of src/ includes a header of a folder above it. Run as a build step
# (cmake -P cmake/check_layers.cmake -DSOURCE_DIR=...), so a wrong include breaks the build.
#
# The layers, each allowed to include itself and the ones listed (and the public versa/):
#   base       the locks, thread-safety annotations, invariant checks, failure records, names,
#              the task record and the wait list: includes nothing of ours
#   data       handles, versions, replicas and coherence, memory nodes, reductions' buffers
#   cpu        CPU workers, deques, topology
#   device     the accelerator interface and the registry of device kinds
#   cuda, emulated, and any other device kind: the backends
#   core       the runtime: scheduler, dispatch, placement; may include everything below
#   mpi        the distributed layer (library versa_mpi): the top; nothing includes it
cmake_minimum_required(VERSION 3.22)
set(allowed_base base)
set(allowed_data base data)
set(allowed_cpu base cpu)
set(allowed_device base data device)
set(allowed_backend base data device)
set(allowed_core base data cpu device core cuda emulated)
set(allowed_mpi base data cpu device core cuda emulated mpi)

file(GLOB_RECURSE sources RELATIVE ${SOURCE_DIR}/src
     ${SOURCE_DIR}/src/*.hpp ${SOURCE_DIR}/src/*.cpp ${SOURCE_DIR}/src/*.cu)
set(violations "")
foreach(source IN LISTS sources)
  string(REGEX REPLACE "/.*" "" layer "${source}")
  if(DEFINED allowed_${layer})
    set(allowed ${allowed_${layer}})
  else()
    set(allowed ${allowed_backend} ${layer})  # a device kind's own folder
  endif()
  file(STRINGS ${SOURCE_DIR}/src/${source} includes REGEX "^#include \"[^/\"]+/")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^#include \"([^/\"]+)/.*" "\\1" target "${line}")
    if(NOT target STREQUAL "versa" AND NOT target IN_LIST allowed)
      string(APPEND violations "\n  src/${source}: ${line} (${layer} may include: ${allowed})")
    endif()
  endforeach()
endforeach()
if(violations)
  message(FATAL_ERROR "Versa: includes that point up the layers:${violations}")
endif()
