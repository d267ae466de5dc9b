# The codec libraries (LZ4/LZ4HC, Zlib, Zstd), each optional: ON by default when the target has it. A build
# without one still decodes everything else and reports codec_unavailable for its data.
set(_codecs ${CMAKE_CURRENT_LIST_DIR})
target_sources(tessera_core PRIVATE
  ${_codecs}/codec_context.cpp
  ${_codecs}/lz4_codec.cpp
  ${_codecs}/zlib_codec.cpp
  ${_codecs}/zstd_codec.cpp)

find_package(PkgConfig QUIET)

# tessera_find_codec(NAME HEADER LIBNAMES PKGNAME): sets TESSERA_<NAME>_INCLUDE_DIR / TESSERA_<NAME>_LIBRARY.
function(tessera_find_codec name header libnames pkgname)
  set(_hints_inc "")
  set(_hints_lib "")
  if(PKG_CONFIG_FOUND AND NOT CMAKE_CROSSCOMPILING)
    pkg_check_modules(_tessera_pc_${name} QUIET ${pkgname})
    set(_hints_inc ${_tessera_pc_${name}_INCLUDE_DIRS})
    set(_hints_lib ${_tessera_pc_${name}_LIBRARY_DIRS})
  endif()
  find_path(TESSERA_${name}_INCLUDE_DIR ${header} HINTS ${_hints_inc})
  find_library(TESSERA_${name}_LIBRARY NAMES ${libnames} HINTS ${_hints_lib})
  if(TESSERA_${name}_INCLUDE_DIR AND TESSERA_${name}_LIBRARY)
    set(TESSERA_${name}_FOUND ON CACHE INTERNAL "the ${name} library exists for this target")
  else()
    set(TESSERA_${name}_FOUND OFF CACHE INTERNAL "the ${name} library exists for this target")
  endif()
endfunction()

if(TESSERA_BAREMETAL)
  # Bare-metal targets have no system libraries: BloscLZ only unless the caller points us at cross-built ones.
  set(_tessera_codec_default OFF)
endif()

foreach(_codec LZ4 ZLIB ZSTD)
  if(_codec STREQUAL "LZ4")
    tessera_find_codec(LZ4 lz4.h lz4 liblz4)
  elseif(_codec STREQUAL "ZLIB")
    tessera_find_codec(ZLIB zlib.h "z;zlib" zlib)
  else()
    tessera_find_codec(ZSTD zstd.h zstd libzstd)
  endif()
  if(DEFINED _tessera_codec_default)
    set(_default ${_tessera_codec_default})
  else()
    set(_default ${TESSERA_${_codec}_FOUND})
  endif()
  option(TESSERA_WITH_${_codec} "Build with the ${_codec} codec library" ${_default})
  if(TESSERA_WITH_${_codec})
    if(NOT TESSERA_${_codec}_FOUND)
      message(FATAL_ERROR "TESSERA_WITH_${_codec} is ON but the ${_codec} library was not found for this target")
    endif()
    target_include_directories(tessera_core SYSTEM PRIVATE ${TESSERA_${_codec}_INCLUDE_DIR})
    target_link_libraries(tessera_core PUBLIC ${TESSERA_${_codec}_LIBRARY})
    target_compile_definitions(tessera_core PUBLIC TESSERA_HAVE_${_codec}=1)
  endif()
  message(STATUS "tessera: codec ${_codec}: ${TESSERA_WITH_${_codec}}")
endforeach()
