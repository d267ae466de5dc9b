# SPDX-License-Identifier: BSD-3-Clause
# Runs one consumer test (registered by tests/consumer/CMakeLists.txt): cmake -D<VAR>=<value>... -P run_consumer.cmake
# Lists are passed with | between items (ctest would split ;). Offline: nothing is downloaded.
#
#   MODE=install     BUILD_DIR PREFIX SOURCE_DIR PORTS LIBDIR INCLUDEDIR BINDIR DOCDIR MANDIR [PKGCONFIG=ON]
#                    [MANPAGE=ON]
#       A fresh `cmake --install BUILD_DIR --prefix PREFIX`; then every public header of the source tree (and of
#       the PORTS built) must be in the prefix, the libraries, the package config and the pkg-config files too,
#       the licence (DOCDIR/copyright) and the tool's manual page (MANDIR/man1/tessera.1, with MANPAGE), and
#       nothing else (no test framework, no private header).
#   MODE=project     PROJECT_DIR WORK_DIR CONFIGURE_ARGS [TARGET] [JOBS] [EMULATOR] EXPECT [EXPECT_C]
#       Configures the project PROJECT_DIR in WORK_DIR/build (a fresh folder) with CONFIGURE_ARGS, builds it
#       (TARGET, or everything), runs the programs whose paths the project wrote to consumer_path.txt, one per
#       line (under EMULATOR when given), and requires exit status 0 and output matching the regular expression
#       EXPECT (the first program) or EXPECT_C (the others: the C program).
#   MODE=pkg-config  PREFIX WORK_DIR PKG_CONFIG MODULES LIBDIR CXX SOURCE DEFINES EXPECT [CC SOURCE_C EXPECT_C]
#       Copies PREFIX to WORK_DIR/moved (the .pc files must be relocatable), compiles SOURCE with one plain
#       compiler command and the flags of `pkg-config --cflags --libs MODULES`, runs it as above; with CC, the C
#       program SOURCE_C the same way with the C compiler.
#   MODE=presets     SOURCE_DIR
#       CMakePresets.json parses (cmake --list-presets), has a configure, build and test preset for every toolchain
#       file (a configure preset that turns TESSERA_BUILD_TESTS off needs no test preset), and every toolchain file
#       it names exists.

cmake_minimum_required(VERSION 3.20)

function(split_list out value)
  string(REPLACE "|" ";" items "${value}")
  set(${out} "${items}" PARENT_SCOPE)
endfunction()

# run_step(<what> <command>...): runs the command with its output shown, fails the test when it fails.
function(run_step what)
  string(REPLACE ";" " " shown "${ARGN}")
  message(STATUS "consumer: ${what}: ${shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer: ${what} FAILED (${rc})")
  endif()
endfunction()

# run_program(<program path>): runs it (under EMULATOR), checks status 0 and output against EXPECT.
function(run_program program)
  split_list(emulator "${EMULATOR}")
  string(REPLACE ";" " " shown "${emulator};${program}")
  message(STATUS "consumer: run: ${shown}")
  execute_process(COMMAND ${emulator} ${program} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer: the program FAILED (exit status ${rc})")
  endif()
  if(NOT out MATCHES "${EXPECT}")
    message(FATAL_ERROR "consumer: the program's output does not match \"${EXPECT}\"")
  endif()
  message(STATUS "consumer: the program ran and printed what was expected")
endfunction()

foreach(var MODE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_consumer.cmake: ${var} is not set")
  endif()
endforeach()

if(MODE STREQUAL "install")
  file(REMOVE_RECURSE "${PREFIX}")
  run_step("install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}")

  # What must be there.
  split_list(ports "${PORTS}")
  set(expected "${LIBDIR}/libtessera_core.a" "${LIBDIR}/cmake/tessera/tesseraConfig.cmake"
               "${LIBDIR}/cmake/tessera/tesseraConfigVersion.cmake" "${LIBDIR}/cmake/tessera/tesseraTargets.cmake")
  if(PKGCONFIG)
    list(APPEND expected "${LIBDIR}/pkgconfig/tessera.pc")
  endif()
  list(APPEND expected "${DOCDIR}/copyright")
  if(ZFP)  # ZFP's hosted wrapper, installed with the core when the build has libzfp
    list(APPEND expected "${LIBDIR}/libtessera_zfp.a")
  endif()
  if(MANPAGE)
    list(APPEND expected "${MANDIR}/man1/tessera.1")
  endif()
  file(GLOB headers RELATIVE "${SOURCE_DIR}/include" "${SOURCE_DIR}/include/tessera/*.hpp"
       "${SOURCE_DIR}/include/tessera/*.h")
  foreach(port IN LISTS ports)
    list(APPEND expected "${LIBDIR}/libtessera_${port}.a")
    if(PKGCONFIG)
      list(APPEND expected "${LIBDIR}/pkgconfig/tessera-${port}.pc")
    endif()
    file(GLOB port_headers RELATIVE "${SOURCE_DIR}/port/${port}/include"
         "${SOURCE_DIR}/port/${port}/include/tessera/port/*.hpp" "${SOURCE_DIR}/port/${port}/include/tessera/port/*.h")
    list(APPEND headers ${port_headers})
  endforeach()
  list(LENGTH headers nheaders)
  if(nheaders LESS 2)
    message(FATAL_ERROR "consumer: found no public headers under ${SOURCE_DIR}")
  endif()
  foreach(header IN LISTS headers)
    list(APPEND expected "${INCLUDEDIR}/${header}")
  endforeach()
  set(missing "")
  foreach(path IN LISTS expected)
    if(NOT EXISTS "${PREFIX}/${path}")
      list(APPEND missing "${path}")
    endif()
  endforeach()
  if(missing)
    string(REPLACE ";" "\n  " missing "${missing}")
    message(FATAL_ERROR "consumer: missing from the installed tree:\n  ${missing}")
  endif()

  # And nothing else: every installed file is one of the expected ones, the export's per-configuration file, or
  # a program in bin/ (the command-line tools).
  file(GLOB_RECURSE installed RELATIVE "${PREFIX}" "${PREFIX}/*")
  set(extra "")
  foreach(path IN LISTS installed)
    if(NOT path IN_LIST expected AND NOT path MATCHES "^${LIBDIR}/cmake/tessera/tesseraTargets-[a-z]+\\.cmake$"
       AND NOT path MATCHES "^${BINDIR}/[^/]+$")
      list(APPEND extra "${path}")
    endif()
  endforeach()
  if(extra)
    string(REPLACE ";" "\n  " extra "${extra}")
    message(FATAL_ERROR "consumer: installed but not part of the package:\n  ${extra}")
  endif()
  list(LENGTH installed ninstalled)
  message(STATUS "consumer: installed ${ninstalled} files into ${PREFIX} (${nheaders} headers), as expected")

elseif(MODE STREQUAL "project")
  file(REMOVE_RECURSE "${WORK_DIR}")
  split_list(args "${CONFIGURE_ARGS}")
  run_step("configure" "${CMAKE_COMMAND}" -S "${PROJECT_DIR}" -B "${WORK_DIR}/build" ${args})
  set(build_args --build "${WORK_DIR}/build")
  if(TARGET)
    list(APPEND build_args --target "${TARGET}")
  endif()
  if(JOBS)
    list(APPEND build_args --parallel "${JOBS}")
  endif()
  run_step("build" "${CMAKE_COMMAND}" ${build_args})
  file(STRINGS "${WORK_DIR}/build/consumer_path.txt" programs)
  set(expect_first "${EXPECT}")
  foreach(program IN LISTS programs)
    run_program("${program}")
    if(DEFINED EXPECT_C)
      set(EXPECT "${EXPECT_C}")  # the programs after the first are C programs
    endif()
  endforeach()
  set(EXPECT "${expect_first}")

elseif(MODE STREQUAL "pkg-config")
  file(REMOVE_RECURSE "${WORK_DIR}")
  # Installed trees get moved (a staging folder, a copied SDK): the .pc files find the prefix from their place.
  file(COPY "${PREFIX}/" DESTINATION "${WORK_DIR}/moved")
  set(ENV{PKG_CONFIG_PATH} "${WORK_DIR}/moved/${LIBDIR}/pkgconfig")
  split_list(modules "${MODULES}")
  execute_process(COMMAND "${PKG_CONFIG}" --cflags --libs ${modules}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE flags ERROR_VARIABLE errors OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer: pkg-config --cflags --libs ${MODULES} FAILED (${rc}): ${errors}")
  endif()
  message(STATUS "consumer: pkg-config --cflags --libs: ${flags}")
  if(NOT flags MATCHES "-I${WORK_DIR}/moved/")
    message(FATAL_ERROR "consumer: the pkg-config flags do not point into the moved tree ${WORK_DIR}/moved")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  split_list(defines "${DEFINES}")
  run_step("compile and link" "${CXX}" -std=c++17 -Wall -Wextra -Werror ${defines} "${SOURCE}" ${flags}
           -o "${WORK_DIR}/consumer")
  run_program("${WORK_DIR}/consumer")
  if(CC)
    # The C program: the memory and posix ports' C headers, when those ports are among the modules.
    set(defines_c "")
    foreach(define IN LISTS defines)
      if(define MATCHES "^-DTESSERA_CONSUMER_(MEMORY|POSIX)$")
        list(APPEND defines_c "${define}")
      endif()
    endforeach()
    run_step("compile and link (C)" "${CC}" -std=c99 -Wall -Wextra -Werror ${defines_c} "${SOURCE_C}" ${flags}
             -o "${WORK_DIR}/consumer_c")
    set(EXPECT "${EXPECT_C}")
    run_program("${WORK_DIR}/consumer_c")
  endif()

elseif(MODE STREQUAL "presets")
  # CMake itself must accept the file (schema, inheritance, names).
  execute_process(COMMAND "${CMAKE_COMMAND}" --list-presets=all WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer: cmake --list-presets=all FAILED in ${SOURCE_DIR}")
  endif()
  # Every toolchain file a preset names exists, and every toolchain file (one that sets CMAKE_SYSTEM_PROCESSOR;
  # linux-cross.cmake and linux-static-libraries.cmake are parts of others) has a configure, build and test preset.
  file(READ "${SOURCE_DIR}/CMakePresets.json" json)
  # A configure preset's cache variable, through its "inherits" (a name or a list of names), or "".
  function(preset_cache_variable out preset variable)
    string(JSON n LENGTH "${json}" configurePresets)
    math(EXPR last "${n} - 1")
    foreach(i RANGE ${last})
      string(JSON name GET "${json}" configurePresets ${i} name)
      if(NOT name STREQUAL preset)
        continue()
      endif()
      string(JSON value ERROR_VARIABLE no_value GET "${json}" configurePresets ${i} cacheVariables ${variable})
      if(NOT no_value)
        set(${out} "${value}" PARENT_SCOPE)
        return()
      endif()
      string(JSON type ERROR_VARIABLE no_parent TYPE "${json}" configurePresets ${i} inherits)
      if(no_parent)
        break()
      endif()
      set(parents "")
      if(type STREQUAL "ARRAY")
        string(JSON np LENGTH "${json}" configurePresets ${i} inherits)
        math(EXPR lastp "${np} - 1")
        foreach(k RANGE ${lastp})
          string(JSON parent GET "${json}" configurePresets ${i} inherits ${k})
          list(APPEND parents "${parent}")
        endforeach()
      else()
        string(JSON parents GET "${json}" configurePresets ${i} inherits)
      endif()
      foreach(parent IN LISTS parents)
        preset_cache_variable(value "${parent}" ${variable})
        if(NOT value STREQUAL "")
          set(${out} "${value}" PARENT_SCOPE)
          return()
        endif()
      endforeach()
      break()
    endforeach()
    set(${out} "" PARENT_SCOPE)
  endfunction()
  set(used "")
  foreach(kind configurePresets buildPresets testPresets)
    set(names_${kind} "")
    string(JSON n LENGTH "${json}" ${kind})
    math(EXPR last "${n} - 1")
    foreach(i RANGE ${last})
      string(JSON name GET "${json}" ${kind} ${i} name)
      string(JSON hidden ERROR_VARIABLE not_hidden GET "${json}" ${kind} ${i} hidden)
      if(NOT not_hidden AND hidden)
        continue()
      endif()
      list(APPEND names_${kind} "${name}")
      if(kind STREQUAL "configurePresets")
        string(JSON toolchain ERROR_VARIABLE no_toolchain GET "${json}" ${kind} ${i} toolchainFile)
        if(NOT no_toolchain)
          string(REPLACE "\${sourceDir}" "${SOURCE_DIR}" toolchain "${toolchain}")
          if(NOT EXISTS "${toolchain}")
            message(FATAL_ERROR "consumer: preset ${name} names a toolchain file that does not exist: ${toolchain}")
          endif()
          get_filename_component(toolchain "${toolchain}" NAME)
          list(APPEND used "${toolchain}")
        endif()
      endif()
    endforeach()
  endforeach()
  file(GLOB toolchains RELATIVE "${SOURCE_DIR}/toolchains" "${SOURCE_DIR}/toolchains/*.cmake")
  foreach(toolchain IN LISTS toolchains)
    file(STRINGS "${SOURCE_DIR}/toolchains/${toolchain}" sets_processor REGEX "^set\\(CMAKE_SYSTEM_PROCESSOR ")
    if(sets_processor AND NOT toolchain IN_LIST used)
      message(FATAL_ERROR "consumer: toolchains/${toolchain} has no configure preset in CMakePresets.json")
    endif()
  endforeach()
  foreach(name IN LISTS names_configurePresets)
    set(kinds buildPresets testPresets)
    preset_cache_variable(tests "${name}" TESSERA_BUILD_TESTS)
    if(tests STREQUAL "OFF")
      set(kinds buildPresets)  # nothing to test: the release and package presets
    endif()
    foreach(kind IN LISTS kinds)
      if(NOT name IN_LIST names_${kind})
        message(FATAL_ERROR "consumer: configure preset ${name} has no ${kind} entry of the same name")
      endif()
    endforeach()
  endforeach()
  list(LENGTH used ntoolchains)
  message(STATUS "consumer: CMakePresets.json covers the ${ntoolchains} toolchains: ${used}")

else()
  message(FATAL_ERROR "run_consumer.cmake: unknown MODE '${MODE}'")
endif()
