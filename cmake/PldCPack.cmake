# SPDX-License-Identifier: Apache-2.0
# CPack: `cpack -G DEB` in a build directory packages what `cmake --install`
# installs (the tool, the libraries, the headers, the CMake package and
# pld.pc) under /usr. Everything in it finds the rest by relative paths, so
# the package also works unpacked anywhere (dpkg -x DIR).
set(CPACK_PACKAGE_NAME pld)
set(CPACK_PACKAGE_VENDOR pld)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "C11 runtime for symmetric-memory collectives")
set(CPACK_PACKAGE_HOMEPAGE_URL "")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_RESOURCE_FILE_README ${PROJECT_SOURCE_DIR}/README.md)
set(CPACK_GENERATOR TGZ)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)

# Debian: one package with the runtime and the development files.
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "pld developers")
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
# Dependencies are named, not computed: dpkg-shlibdeps is in dpkg-dev,
# which a machine that only builds pld need not have.
# libpld.so needs the MPI library it was built with (Debian 12's names).
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6")
if(PLD_HAVE_MPI AND MPI_C_LIBRARIES MATCHES "openmpi")
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libopenmpi3")
elseif(PLD_HAVE_MPI AND MPI_C_LIBRARIES MATCHES "mpich")
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libmpich12")
endif()

include(CPack)
