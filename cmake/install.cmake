# Install rules, the CMake package (find_package(versa CONFIG) -> versa::versa) and versa.pc.
# Included by the top-level CMakeLists.txt when VERSA_INSTALL is on, after cmake/cuda.cmake, so
# that the versa target and what it links are complete.
#
# Layout (GNUInstallDirs):
#   include/versa/**                       the public headers
#   lib/libversa.a (or .so.<version>)      the library
#   lib/cmake/versa/versa{Config,ConfigVersion,Targets*}.cmake
#   lib/pkgconfig/versa.pc
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(VERSA_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/versa
    CACHE STRING "Where the CMake package of Versa is installed, relative to the prefix")
mark_as_advanced(VERSA_INSTALL_CMAKEDIR)

target_include_directories(versa PUBLIC $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
install(TARGETS versa EXPORT versaTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_SKIP
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The .so symlink a linker looks for, on its own so that a runtime-only install can leave it out.
if(BUILD_SHARED_LIBS)
  install(TARGETS versa EXPORT versaTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          NAMELINK_ONLY)
endif()
# The distributed layer, when built: versa::mpi in the same package. Its header needs mpi.h, so
# it is installed only with the library.
set(VERSA_PACKAGE_MPI OFF)
if(TARGET versa_mpi)
  set(VERSA_PACKAGE_MPI ON)
  target_include_directories(versa_mpi PUBLIC $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  install(TARGETS versa_mpi EXPORT versaTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/versa DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp" PATTERN "mpi.hpp" EXCLUDE)
if(VERSA_PACKAGE_MPI)
  install(FILES ${PROJECT_SOURCE_DIR}/include/versa/mpi.hpp
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/versa)
endif()
install(EXPORT versaTargets NAMESPACE versa:: DESTINATION ${VERSA_INSTALL_CMAKEDIR})

# What versaConfig.cmake must find again in the user's project: the link dependencies of
# versa::versa. Threads always; hwloc and the CUDA libraries when this build used them. A static
# library names its private dependencies too (as $<LINK_ONLY:PkgConfig::HWLOC>).
set(VERSA_PACKAGE_SHARED OFF)
set(VERSA_PACKAGE_HWLOC OFF)
set(VERSA_PACKAGE_CUDA OFF)
if(BUILD_SHARED_LIBS)
  set(VERSA_PACKAGE_SHARED ON)  # hwloc is then private to libversa.so, which names it itself
elseif(HWLOC_FOUND)
  set(VERSA_PACKAGE_HWLOC ON)
endif()
if(VERSA_HAVE_CUDA)
  set(VERSA_PACKAGE_CUDA ON)
endif()

# Until 1.0 a minor release may change the API; from 1.0 on, the major version says so.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(VERSA_PACKAGE_COMPATIBILITY SameMinorVersion)
else()
  set(VERSA_PACKAGE_COMPATIBILITY SameMajorVersion)
endif()
write_basic_package_version_file(${PROJECT_BINARY_DIR}/versaConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION}
                                 COMPATIBILITY ${VERSA_PACKAGE_COMPATIBILITY})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/versaConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/versaConfig.cmake
                              INSTALL_DESTINATION ${VERSA_INSTALL_CMAKEDIR}
                              NO_SET_AND_CHECK_MACRO NO_CHECK_REQUIRED_COMPONENTS_MACRO)
install(FILES ${PROJECT_BINARY_DIR}/versaConfig.cmake ${PROJECT_BINARY_DIR}/versaConfigVersion.cmake
        DESTINATION ${VERSA_INSTALL_CMAKEDIR})
# The build tree is a package too: -Dversa_DIR=<build dir> uses the library without installing.
export(EXPORT versaTargets NAMESPACE versa:: FILE ${PROJECT_BINARY_DIR}/versaTargets.cmake)

# versa.pc. Relative to its own folder (${pcfiledir}), so the tree may be installed with
# `cmake --install --prefix` anywhere or moved. A static library lists what it links in Libs
# and Requires, where `pkg-config --libs versa` reads them: there is no shared library to carry
# them. A shared one keeps them private.
set(VERSA_PC_LIBS "-L\${libdir} -lversa")
set(VERSA_PC_DEPS "-pthread")
set(VERSA_PC_REQUIRES "")
# The headers need the value the library was built with (versa/detail/cuda_backend.hpp).
if(VERSA_HAVE_CUDA)
  set(VERSA_PC_CFLAGS "-I\${includedir} -DVERSA_HAVE_CUDA=1")
else()
  set(VERSA_PC_CFLAGS "-I\${includedir} -DVERSA_HAVE_CUDA=0")
endif()
if(HWLOC_FOUND)
  set(VERSA_PC_REQUIRES "hwloc")
endif()
if(VERSA_HAVE_CUDA)
  # The CUDA libraries are public (versa/cuda.hpp includes their headers), also for a shared
  # build. The toolkit ships no .pc under a standard name, so its paths are written out.
  foreach(dir IN LISTS CUDAToolkit_INCLUDE_DIRS)
    string(APPEND VERSA_PC_CFLAGS " -I${dir}")
  endforeach()
  string(APPEND VERSA_PC_LIBS " -L${CUDAToolkit_LIBRARY_DIR} -lcudart -lcublas -lcusolver")
endif()
if(BUILD_SHARED_LIBS)
  set(VERSA_PC_LIBS_PRIVATE "${VERSA_PC_DEPS}")
  set(VERSA_PC_REQUIRES_PRIVATE "${VERSA_PC_REQUIRES}")
  set(VERSA_PC_REQUIRES "")
else()
  string(APPEND VERSA_PC_LIBS " ${VERSA_PC_DEPS}")
  set(VERSA_PC_LIBS_PRIVATE "")
  set(VERSA_PC_REQUIRES_PRIVATE "")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(VERSA_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(VERSA_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  file(RELATIVE_PATH pc_to_prefix "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
  string(REGEX REPLACE "/$" "" pc_to_prefix "${pc_to_prefix}")
  set(VERSA_PC_PREFIX "\${pcfiledir}/${pc_to_prefix}")
  set(VERSA_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(VERSA_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(VERSA_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/versa.pc.in ${PROJECT_BINARY_DIR}/versa.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/versa.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
