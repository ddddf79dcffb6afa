# The package test (ctest: package_install): installs this build into a
# temporary prefix, then builds and runs tests/package/consumer.cpp as an
# outside project would, once through find_package and once through
# pkg-config; for a shared library it also checks the SONAME and that only the
# public API is exported.
#
# cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DCXX=... -DSHARED=ON|OFF -DSOVERSION=... -P PackageTest.cmake

function(run_checked what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what}: expected exit status 0, got ${rc}\n${out}\n${err}")
  endif()
  set(LAST_OUTPUT "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
run_checked("installing" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# The test kit and internal headers stay out of the package.
file(GLOB_RECURSE installed RELATIVE ${prefix} ${prefix}/*)
foreach(f ${installed})
  if(f MATCHES "(reference|check|planner|/io/|vk/|testkit|internal)")
    message(FATAL_ERROR "install: expected only the library's public files, got ${f}")
  endif()
endforeach()

# 1. find_package(vkattn CONFIG) -> vkattn::vkattn.
run_checked("configuring the find_package consumer" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/package
            -B ${WORK_DIR}/cmake-build -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX}
            -DCMAKE_BUILD_TYPE=Release)
run_checked("building the find_package consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/cmake-build)
run_checked("running the find_package consumer" ${WORK_DIR}/cmake-build/consumer)
message(STATUS "find_package: ${LAST_OUTPUT}")

# 2. pkg-config, with the compiler alone.
file(GLOB_RECURSE pc_files ${prefix}/*/vkattn.pc)
list(GET pc_files 0 pc_file)
get_filename_component(pc_dir ${pc_file} DIRECTORY)
set(ENV{PKG_CONFIG_PATH} ${pc_dir})
set(pc_args --cflags --libs)
if(NOT SHARED)
  list(APPEND pc_args --static)
endif()
run_checked("pkg-config" pkg-config ${pc_args} vkattn)
string(STRIP "${LAST_OUTPUT}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
run_checked("building the pkg-config consumer" ${CXX} -std=c++20 ${SOURCE_DIR}/tests/package/consumer.cpp ${flags}
            -o ${WORK_DIR}/pkg-consumer)
get_filename_component(libdir ${pc_dir} DIRECTORY)
set(ENV{LD_LIBRARY_PATH} ${libdir})
run_checked("running the pkg-config consumer" ${WORK_DIR}/pkg-consumer)
message(STATUS "pkg-config: ${LAST_OUTPUT}")

if(SHARED)
  run_checked("readelf" readelf -d ${libdir}/libvkattn.so)
  if(NOT LAST_OUTPUT MATCHES "SONAME[^\n]*\\[libvkattn\\.so\\.${SOVERSION}\\]")
    message(FATAL_ERROR "libvkattn.so: expected SONAME libvkattn.so.${SOVERSION}, got\n${LAST_OUTPUT}")
  endif()
  # Every exported symbol is public API: the C API, or in namespace vkattn but
  # not its internal namespaces; nothing of fmt, nlohmann-json or the C++ library.
  run_checked("nm" nm -D --defined-only -C ${libdir}/libvkattn.so)
  string(REPLACE "\n" ";" symbols "${LAST_OUTPUT}")
  foreach(line ${symbols})
    string(REGEX REPLACE "^[0-9a-f]+ [A-Za-z] " "" name "${line}")
    if(name STREQUAL "" OR name MATCHES "^(_init|_fini)$")
      continue()
    endif()
    if(name MATCHES "^vkattn_[a-z0-9_]+$")  # the C API
      continue()
    endif()
    if(NOT name MATCHES "^(typeinfo for |typeinfo name for |vtable for )?vkattn::" OR
       name MATCHES "^(typeinfo for |typeinfo name for |vtable for )?vkattn::(vk|planner|ops|reference|check|io)::")
      message(FATAL_ERROR "libvkattn.so: expected only public vkattn symbols exported, got '${name}'")
    endif()
  endforeach()
endif()
