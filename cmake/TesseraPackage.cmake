# SPDX-License-Identifier: BSD-3-Clause
# How other projects take Tessera in (included by the root CMakeLists.txt once the core and the ports exist):
#   installed   `cmake --install` puts the public headers (include/tessera/*.hpp, include/tessera/port/*.hpp of
#               the ports built), the static libraries, a CMake package (find_package(tessera) gives tessera::core
#               and tessera::<port> for each port built) and, for targets with an OS, pkg-config files (tessera.pc,
#               tessera-<port>.pc). The package is relocatable; tests/consumer/ builds programs against it.
#   subproject  add_subdirectory() or FetchContent of the source tree: the same names, as ALIAS targets; tests and
#               examples are off unless Tessera is the top-level project, and so are these install rules
#               (TESSERA_INSTALL).

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

option(TESSERA_INSTALL "Generate the install rules (headers, static libraries, CMake package, pkg-config files)"
       ${PROJECT_IS_TOP_LEVEL})

set(_tessera_pkg_ports "")
foreach(_port memory flash posix)
  if(TARGET tessera_${_port})
    list(APPEND _tessera_pkg_ports ${_port})
  endif()
endforeach()

# Exported names: tessera::core, tessera::memory, tessera::flash, tessera::posix (the ALIAS names of the build).
set_target_properties(tessera_core PROPERTIES EXPORT_NAME core)
foreach(_port IN LISTS _tessera_pkg_ports)
  set_target_properties(tessera_${_port} PROPERTIES EXPORT_NAME ${_port})
endforeach()

# A sanitized build's libraries call the sanitizers' run time: every program linking them needs it too (the
# project's own programs get it from add_link_options; users' programs from here, installed or subproject).
if(TESSERA_SANITIZER_LIST)
  target_link_options(tessera_core INTERFACE -fsanitize=${TESSERA_SANITIZER_LIST})
endif()
# A coverage build's libraries call gcov's run time.
if(TESSERA_COVERAGE)
  target_link_options(tessera_core INTERFACE --coverage)
endif()

# Bare metal: the libraries are compiled with function sections (TesseraFirmware.cmake); a program linking them
# with --gc-sections keeps only what it calls.
if(TESSERA_OPTIMIZE_SIZE AND TESSERA_BAREMETAL)
  target_link_options(tessera_core INTERFACE LINKER:--gc-sections)
endif()

if(NOT TESSERA_INSTALL)
  return()
endif()

set(_tessera_pkg_cmakedir ${CMAKE_INSTALL_LIBDIR}/cmake/tessera)
set(_tessera_pkg_targets tessera_core)
# ZFP's hosted wrapper (src/codecs/libraries.cmake), which tessera_core links when the build has libzfp.
if(TARGET tessera_zfp)
  set_target_properties(tessera_zfp PROPERTIES EXPORT_NAME zfp)
  list(APPEND _tessera_pkg_targets tessera_zfp)
endif()
foreach(_port IN LISTS _tessera_pkg_ports)
  list(APPEND _tessera_pkg_targets tessera_${_port})
endforeach()

install(TARGETS ${_tessera_pkg_targets} EXPORT tesseraTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")
foreach(_port IN LISTS _tessera_pkg_ports)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/port/${_port}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")
endforeach()
install(EXPORT tesseraTargets NAMESPACE tessera:: DESTINATION ${_tessera_pkg_cmakedir})
# The command-line tool (tools/), where it is built.
if(TARGET tessera)
  install(TARGETS tessera RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# The codec libraries the core links (src/codecs/libraries.cmake): by the paths found for this target. The
# package config checks they still exist; the pkg-config file names their pkg-config modules where they have one.
set(_tessera_pkg_codecs "")
set(_tessera_pkg_codec_files "")
foreach(_codec LZ4 ZLIB ZSTD ZFP)
  if(TESSERA_WITH_${_codec})
    list(APPEND _tessera_pkg_codecs ${_codec})
    if(IS_ABSOLUTE "${TESSERA_${_codec}_LIBRARY}")
      list(APPEND _tessera_pkg_codec_files "${TESSERA_${_codec}_LIBRARY}")
    endif()
  endif()
endforeach()

string(REPLACE ";" ", " _tessera_pkg_ports_text "${_tessera_pkg_ports}")
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/tesseraConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/tesseraConfig.cmake
  INSTALL_DESTINATION ${_tessera_pkg_cmakedir})
# 0.x: a new minor version may change the API. The version file also rejects a 32-bit build for a 64-bit
# program and the other way round (CMAKE_SIZEOF_VOID_P).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/tesseraConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/tesseraConfig.cmake ${PROJECT_BINARY_DIR}/package/tesseraConfigVersion.cmake
  DESTINATION ${_tessera_pkg_cmakedir})

# pkg-config files, for targets with an OS: tessera (the core) and tessera-<port> (requires tessera).
if(NOT TESSERA_BAREMETAL)
  set(_tessera_pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
    # Absolute install directories: no relocation.
    set(_tessera_pc_prefix "${CMAKE_INSTALL_PREFIX}")
    set(_tessera_pc_libdir "${CMAKE_INSTALL_FULL_LIBDIR}")
    set(_tessera_pc_includedir "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
  else()
    # The prefix relative to the .pc file (pkg-config's ${pcfiledir}): the tree can move after installing.
    file(RELATIVE_PATH _up "/root/${_tessera_pc_dir}" "/root")
    string(REGEX REPLACE "/$" "" _up "${_up}")
    set(_tessera_pc_prefix "\${pcfiledir}/${_up}")
    set(_tessera_pc_libdir "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
    set(_tessera_pc_includedir "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
  endif()

  find_package(PkgConfig QUIET)
  set(_tessera_pc_module_LZ4 liblz4)
  set(_tessera_pc_module_ZLIB zlib)
  set(_tessera_pc_module_ZSTD libzstd)
  set(_tessera_pc_core_requires "")
  set(_tessera_pc_core_libs "-ltessera_core")
  foreach(_codec IN LISTS _tessera_pkg_codecs)
    set(_module ${_tessera_pc_module_${_codec}})
    if(PKG_CONFIG_FOUND AND NOT CMAKE_CROSSCOMPILING)
      pkg_check_modules(_tessera_pcmod_${_codec} QUIET ${_module})
    endif()
    if(_codec STREQUAL "ZFP")
      # After the core, which calls it; libzfp has no pkg-config module; m for pow.
      string(APPEND _tessera_pc_core_libs " -ltessera_zfp ${TESSERA_ZFP_LIBRARY} -lm")
    elseif(_tessera_pcmod_${_codec}_FOUND)
      list(APPEND _tessera_pc_core_requires ${_module})
    else()
      string(APPEND _tessera_pc_core_libs " ${TESSERA_${_codec}_LIBRARY}")
    endif()
  endforeach()
  string(REPLACE ";" " " _tessera_pc_core_requires "${_tessera_pc_core_requires}")
  # The core's public compile definitions (TESSERA_HAVE_<CODEC>=1), as the CMake targets carry them.
  set(_tessera_pc_core_cflags "")
  get_target_property(_defs tessera_core INTERFACE_COMPILE_DEFINITIONS)
  if(_defs)
    foreach(_def IN LISTS _defs)
      if(NOT _def MATCHES "\\$<")
        string(APPEND _tessera_pc_core_cflags " -D${_def}")
      endif()
    endforeach()
  endif()
  if(TESSERA_SANITIZER_LIST)
    string(APPEND _tessera_pc_core_libs " -fsanitize=${TESSERA_SANITIZER_LIST}")
  endif()
  if(TESSERA_COVERAGE)
    string(APPEND _tessera_pc_core_libs " --coverage")
  endif()

  # _tessera_pc_write(<file name> <Name> <Description> <Requires> <Libs> <Cflags>)
  function(_tessera_pc_write file _tessera_pc_name _tessera_pc_description _tessera_pc_requires _tessera_pc_libs
           _tessera_pc_cflags)
    configure_file(${PROJECT_SOURCE_DIR}/cmake/tessera.pc.in ${PROJECT_BINARY_DIR}/package/${file} @ONLY)
    install(FILES ${PROJECT_BINARY_DIR}/package/${file} DESTINATION ${_tessera_pc_dir})
  endfunction()
  _tessera_pc_write(tessera.pc tessera "${PROJECT_DESCRIPTION}" "${_tessera_pc_core_requires}"
                    "${_tessera_pc_core_libs}" "${_tessera_pc_core_cflags}")
  if("posix" IN_LIST _tessera_pkg_ports)
    find_package(Threads REQUIRED)  # CMAKE_THREAD_LIBS_INIT: -pthread, -lpthread or nothing (in libc)
  endif()
  set(_tessera_pc_port_libs_posix "-ltessera_posix ${CMAKE_THREAD_LIBS_INIT}")
  set(_tessera_pc_port_libs_memory "-ltessera_memory")
  set(_tessera_pc_port_libs_flash "-ltessera_flash")
  set(_tessera_pc_port_what_posix "files, directories, malloc and a thread pool")
  set(_tessera_pc_port_what_memory "storages in RAM")
  set(_tessera_pc_port_what_flash "raw NOR flash")
  foreach(_port IN LISTS _tessera_pkg_ports)
    string(STRIP "${_tessera_pc_port_libs_${_port}}" _libs)
    _tessera_pc_write(tessera-${_port}.pc tessera-${_port} "Tessera's ${_port} port: ${_tessera_pc_port_what_${_port}}"
                      tessera "${_libs}" "")
  endforeach()
endif()

# ---- The licence, the manual page and the Debian package.
# The licence goes with every installation, as the Debian copyright file (machine-readable format: the whole
# LICENSE, third-party test data note included) in share/doc/tessera/copyright.
file(READ ${PROJECT_SOURCE_DIR}/LICENSE _tessera_licence)
string(REGEX REPLACE "\n+$" "" _tessera_licence "${_tessera_licence}")
string(REGEX REPLACE "\n\n" "\n.\n" _tessera_licence "${_tessera_licence}")
string(REGEX REPLACE "\n\n" "\n.\n" _tessera_licence "${_tessera_licence}")
string(REPLACE "\n" "\n " _tessera_licence " ${_tessera_licence}")
file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/package/copyright CONTENT "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: tessera
Comment: ${PROJECT_DESCRIPTION}

Files: *
Copyright: 2025-2026, The Tessera authors
License: BSD-3-Clause
${_tessera_licence}
" @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/package/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})

# The tool's manual page, made from its --help (cmake/tessera_man.cmake), where the tool runs on this machine.
if(TARGET tessera AND NOT CMAKE_CROSSCOMPILING)
  add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/package/tessera.1
    COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:tessera> -DOUT=${PROJECT_BINARY_DIR}/package/tessera.1
            -DVERSION=${PROJECT_VERSION} -P ${PROJECT_SOURCE_DIR}/cmake/tessera_man.cmake
    DEPENDS tessera ${PROJECT_SOURCE_DIR}/cmake/tessera_man.cmake
    COMMENT "The manual page tessera.1, from tessera --help" VERBATIM)
  add_custom_target(tessera_man ALL DEPENDS ${PROJECT_BINARY_DIR}/package/tessera.1)
  install(FILES ${PROJECT_BINARY_DIR}/package/tessera.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()

# CPack: one Debian package, tessera_VERSION_ARCH.deb (`cpack --preset package`, or `cmake --workflow --preset
# package`; ci/package.sh builds, installs, uses and removes it): what `cmake --install` installs, under /usr.
# Hosts only: a firmware takes the sources (add_subdirectory) or its own install.
if(NOT TESSERA_BAREMETAL AND NOT CMAKE_CROSSCOMPILING)
  set(CPACK_GENERATOR DEB)
  set(CPACK_PACKAGE_NAME tessera)
  set(CPACK_PACKAGE_VENDOR "The Tessera authors")
  set(CPACK_PACKAGE_CONTACT "The Tessera authors")
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Blosc2 B2ND arrays: the tessera tool and a freestanding C++17/C library")
  set(CPACK_PACKAGE_DESCRIPTION "Tessera reads and writes Blosc2 B2ND n-dimensional arrays (the format of c-blosc2 \
and python-blosc2). This package holds the tessera command-line tool (info, dump, create, convert, verify, \
compact), the static libraries (the core, ZFP's wrapper where built, and the memory, flash and POSIX ports), their headers, the CMake package \
(find_package(tessera)) and the pkg-config files.")
  set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # tessera_<version>_<architecture>.deb
  set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
  # The tool's run-time libraries from dpkg-shlibdeps (dpkg-dev); the codec libraries' -dev packages because the
  # static libraries, the CMake package and the pkg-config files link them.
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  set(_tessera_deb_dev_LZ4 liblz4-dev)
  set(_tessera_deb_dev_ZSTD libzstd-dev)
  set(_tessera_deb_dev_ZLIB zlib1g-dev)
  set(_tessera_deb_dev_ZFP libzfp-dev)
  set(_tessera_deb_depends "")
  foreach(_codec IN LISTS _tessera_pkg_codecs)
    list(APPEND _tessera_deb_depends ${_tessera_deb_dev_${_codec}})
  endforeach()
  string(REPLACE ";" ", " CPACK_DEBIAN_PACKAGE_DEPENDS "${_tessera_deb_depends}")
  include(CPack)
endif()
