# The distributed layer (src/mpi, include/versa/mpi.hpp): library versa_mpi, target
# versa::mpi, on top of versa::versa and MPI. Included by the top-level CMakeLists.txt when
# VERSA_MPI found MPI (VERSA_HAVE_MPI).
add_library(versa_mpi
  src/mpi/collectives.cpp
  src/mpi/mpi_runtime.cpp
  src/mpi/owner_computes.cpp
  src/mpi/peer_watch.cpp
  src/mpi/progress_engine.cpp
  src/mpi/stream_probes.cpp
  src/mpi/transfers.cpp
)
add_library(versa::mpi ALIAS versa_mpi)
add_dependencies(versa_mpi versa_layers)
target_include_directories(versa_mpi
  PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(versa_mpi PUBLIC versa MPI::MPI_CXX)
target_compile_options(versa_mpi PRIVATE $<TARGET_PROPERTY:versa_options,INTERFACE_COMPILE_OPTIONS>)
target_compile_definitions(versa_mpi
  PRIVATE $<TARGET_PROPERTY:versa_options,INTERFACE_COMPILE_DEFINITIONS>)
target_link_options(versa_mpi PRIVATE $<TARGET_PROPERTY:versa_options,INTERFACE_LINK_OPTIONS>)
set_target_properties(versa_mpi PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${VERSA_SOVERSION}
                                           EXPORT_NAME mpi)
