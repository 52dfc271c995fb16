# A Debian package of the installed tree: `cpack -G DEB` in the build folder writes
# libversa-dev_<version>_<arch>.deb (headers, library, CMake package, versa.pc under /usr).
# Included by the top-level CMakeLists.txt with cmake/install.cmake.
set(CPACK_PACKAGE_NAME libversa-dev)
set(CPACK_PACKAGE_VENDOR "Versa")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "C++20 task runtime for CPU+GPU machines (development files)")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(VERSA_DEB_MAINTAINER "Versa maintainers <versa@localhost>"
    CACHE STRING "The Maintainer field of the Debian package (cpack -G DEB)")
set(CPACK_PACKAGE_CONTACT "${VERSA_DEB_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
string(CONCAT CPACK_PACKAGE_DESCRIPTION
       "Tasks access data handles with an access mode; Versa derives the dependencies from the "
       "order of submission and runs each task on a CPU worker or a CUDA GPU. Headers, library, CMake "
       "package (find_package(versa CONFIG)) and pkg-config module (versa).")
# hwloc's headers and .pc when the build used it: versa.pc requires the module (privately for a
# shared library, which pkg-config still checks), and a static library's users link it. The CUDA
# toolkit, when the backend is built, comes from NVIDIA's packages or the distribution's
# nvidia-cuda-toolkit, with no one name to depend on: suggested only.
if(HWLOC_FOUND)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libhwloc-dev")
endif()
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "pkg-config, cmake")
if(VERSA_HAVE_CUDA)
  set(CPACK_DEBIAN_PACKAGE_SUGGESTS "nvidia-cuda-toolkit")
endif()
include(CPack)
