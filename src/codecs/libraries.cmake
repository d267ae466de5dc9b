# SPDX-License-Identifier: BSD-3-Clause
# The codec libraries (LZ4/LZ4HC, Zlib, Zstd, ZFP), each optional: ON by default when the target has it. A build
# without one still decodes everything else and reports codec_unavailable for its data.
# One object file per library and direction: on bare metal the core refers to them weakly, so a firmware links
# only those whose codec_link_* function it calls (tessera/codecs.hpp); hosts link every one.
tessera_core_sources(codec_context.cpp codec_link_all.cpp
  lz4_decode.cpp lz4_encode.cpp lz4hc_encode.cpp lz4_dict_encode.cpp lz4hc_dict_encode.cpp
  zlib_decode.cpp zlib_encode.cpp zstd_decode.cpp zstd_encode.cpp)
if(TESSERA_BAREMETAL)
  target_compile_definitions(tessera_core PUBLIC TESSERA_CODECS_ON_DEMAND=1)
endif()

find_package(PkgConfig QUIET)
include(CheckCSourceCompiles)

# tessera_find_codec(NAME HEADER LIBNAMES PKGNAME PROBE): sets TESSERA_<NAME>_INCLUDE_DIR / TESSERA_<NAME>_LIBRARY
# and TESSERA_<NAME>_FOUND. Found means: header and library exist AND a small program calling the library
# (PROBE, C source) links for this target, with this target's flags. On the Linux cross targets the links are
# static, so an archive of the wrong architecture, or a shared object where only an archive will do, is not
# found instead of failing the build later. Cross builds find the libraries in the sysroots of
# ci/cross-sysroots.sh through CMAKE_FIND_ROOT_PATH (toolchains/linux-cross.cmake, toolchains/cortex-m4.cmake).
function(tessera_find_codec name header libnames pkgname probe)
  set(_hints_inc "")
  set(_hints_lib "")
  if(PKG_CONFIG_FOUND AND NOT CMAKE_CROSSCOMPILING)
    pkg_check_modules(_tessera_pc_${name} QUIET ${pkgname})
    set(_hints_inc ${_tessera_pc_${name}_INCLUDE_DIRS})
    set(_hints_lib ${_tessera_pc_${name}_LIBRARY_DIRS})
  endif()
  find_library(TESSERA_${name}_LIBRARY NAMES ${libnames} HINTS ${_hints_lib})
  # The headers of that library first: <prefix>/include beside <prefix>/lib[/<triple>]/lib<name>.a.
  if(TESSERA_${name}_LIBRARY)
    get_filename_component(_libdir "${TESSERA_${name}_LIBRARY}" DIRECTORY)
    list(APPEND _hints_inc "${_libdir}/../include" "${_libdir}/../../include")
  endif()
  find_path(TESSERA_${name}_INCLUDE_DIR ${header} HINTS ${_hints_inc})
  set(_found OFF)
  if(TESSERA_${name}_INCLUDE_DIR AND TESSERA_${name}_LIBRARY)
    # The link check is cached; it runs again when what it checked changes.
    set(_checked "${TESSERA_${name}_INCLUDE_DIR}|${TESSERA_${name}_LIBRARY}|${CMAKE_C_COMPILER}|${CMAKE_C_FLAGS}|${CMAKE_EXE_LINKER_FLAGS}")
    if(NOT "${_checked}" STREQUAL "${_TESSERA_${name}_LINK_CHECKED}")
      unset(TESSERA_${name}_LINKS CACHE)
    endif()
    set(CMAKE_REQUIRED_INCLUDES ${TESSERA_${name}_INCLUDE_DIR})
    set(CMAKE_REQUIRED_LIBRARIES ${TESSERA_${name}_LIBRARY})
    set(CMAKE_REQUIRED_QUIET ON)
    check_c_source_compiles("${probe}" TESSERA_${name}_LINKS)
    set(_TESSERA_${name}_LINK_CHECKED "${_checked}" CACHE INTERNAL "what TESSERA_${name}_LINKS was checked with")
    if(TESSERA_${name}_LINKS)
      set(_found ON)
    else()
      message(STATUS "tessera: ${TESSERA_${name}_LIBRARY} does not link into a program of this target: ${name} off"
                     " (CMakeFiles/CMakeError.log or --debug-trycompile says why)")
    endif()
  endif()
  set(TESSERA_${name}_FOUND ${_found} CACHE INTERNAL "the ${name} library exists for this target")
endfunction()

# Bare-metal targets have no system libraries: a codec is found only in the toolchain's CMAKE_FIND_ROOT_PATH
# (toolchains/cortex-m4.cmake: LZ4 and Zstd from ci/cross-sysroots.sh, built there without a heap), and the link
# check rejects an archive of another CPU or float ABI. Not found: BloscLZ only.

# ZFP (c-blosc2's codecs 33, 34, 35) is for hosts only: libzfp allocates with malloc, so its wrapper is a library
# of its own, tessera_zfp, outside the freestanding core (codecs/zfp.hpp); no cross sysroot or bare-metal target
# has libzfp.
foreach(_codec LZ4 ZLIB ZSTD ZFP)
  # The default this option had at the previous configure (older caches: it was TESSERA_<X>_FOUND).
  if(DEFINED _TESSERA_WITH_${_codec}_DEFAULT)
    set(_previous_default ${_TESSERA_WITH_${_codec}_DEFAULT})
  elseif(DEFINED TESSERA_${_codec}_FOUND)
    set(_previous_default ${TESSERA_${_codec}_FOUND})
  else()
    unset(_previous_default)
  endif()
  if(_codec STREQUAL "LZ4")
    tessera_find_codec(LZ4 lz4.h lz4 liblz4 [[
#include <lz4.h>
#include <lz4hc.h>
int main(void) { return LZ4_versionNumber() == 0 || LZ4_compressBound(1) == 0 || LZ4_sizeofStateHC() == 0; }
]])
  elseif(_codec STREQUAL "ZLIB")
    tessera_find_codec(ZLIB zlib.h "z;zlib" zlib [[
#include <zlib.h>
int main(void) { return zlibVersion()[0] == 0 || compressBound(1) == 0; }
]])
  elseif(_codec STREQUAL "ZSTD")
    tessera_find_codec(ZSTD zstd.h zstd libzstd [[
#include <zstd.h>
int main(void) { return ZSTD_versionNumber() == 0 || ZSTD_compressBound(1) == 0; }
]])
  elseif(TESSERA_BAREMETAL)
    set(TESSERA_ZFP_FOUND OFF CACHE INTERNAL "the ZFP library exists for this target")
  else()
    tessera_find_codec(ZFP zfp.h zfp zfp [[
#include <zfp.h>
int main(void) { zfp_stream* z = zfp_stream_open(0); zfp_stream_close(z); return ZFP_VERSION_MAJOR < 1; }
]])
  endif()
  set(_default ${TESSERA_${_codec}_FOUND})
  option(TESSERA_WITH_${_codec} "Build with the ${_codec} codec library" ${_default})
  # An option that followed its default follows it on: a library that appears later (ci/cross-sysroots.sh run
  # after the first configure) or goes away switches the codec in an existing build folder. A value the user
  # set against the default stays.
  if(DEFINED _previous_default AND NOT _default STREQUAL _previous_default
     AND TESSERA_WITH_${_codec} STREQUAL _previous_default)
    set(TESSERA_WITH_${_codec} ${_default} CACHE BOOL "Build with the ${_codec} codec library" FORCE)
  endif()
  set(_TESSERA_WITH_${_codec}_DEFAULT ${_default} CACHE INTERNAL "the default of TESSERA_WITH_${_codec}")
  if(TESSERA_WITH_${_codec})
    if(NOT TESSERA_${_codec}_FOUND)
      message(FATAL_ERROR "TESSERA_WITH_${_codec} is ON but the ${_codec} library was not found for this target"
                          " (cross targets: ci/cross-sysroots.sh makes it)")
    endif()
    if(_codec STREQUAL "ZFP")
      if(TESSERA_BAREMETAL)
        message(FATAL_ERROR "TESSERA_WITH_ZFP: ZFP is for hosts only (libzfp allocates with malloc)")
      endif()
      # The hosted wrapper, compiled like the core (its headers, definitions and flags), linked after it.
      add_library(tessera_zfp STATIC ${CMAKE_CURRENT_LIST_DIR}/zfp_codec.cpp)
      add_library(tessera::zfp ALIAS tessera_zfp)
      target_include_directories(tessera_zfp SYSTEM PRIVATE ${TESSERA_ZFP_INCLUDE_DIR})
      target_include_directories(tessera_zfp PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
                                 $<TARGET_PROPERTY:tessera_core,INTERFACE_INCLUDE_DIRECTORIES>)
      target_compile_definitions(tessera_zfp PRIVATE $<TARGET_PROPERTY:tessera_core,INTERFACE_COMPILE_DEFINITIONS>)
      target_compile_options(tessera_zfp PRIVATE ${TESSERA_WARNINGS}
                             $<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions -fno-rtti -fno-threadsafe-statics>)
      target_link_libraries(tessera_zfp PUBLIC ${TESSERA_ZFP_LIBRARY} m)  # m: pow, for the tolerance
      target_link_libraries(tessera_core PUBLIC tessera_zfp)
    else()
      target_include_directories(tessera_core SYSTEM PRIVATE ${TESSERA_${_codec}_INCLUDE_DIR})
      target_link_libraries(tessera_core PUBLIC ${TESSERA_${_codec}_LIBRARY})
    endif()
    target_compile_definitions(tessera_core PUBLIC TESSERA_HAVE_${_codec}=1)
    message(STATUS "tessera: codec ${_codec}: ON (${TESSERA_${_codec}_LIBRARY})")
  else()
    message(STATUS "tessera: codec ${_codec}: OFF")
  endif()
endforeach()
