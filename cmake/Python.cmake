# The `vkattn` Python module (python/vkattn_module.cpp), its tests under CTest,
# and its install rule. It embeds the library (the internal archive, built
# position-independent) so it depends on nothing but Python, NumPy and the
# Vulkan loader.
# Debian's python3 (whose NumPy is python3-numpy, from scripts/setup.sh) unless
# -DPython_EXECUTABLE names another; an interpreter earlier on PATH (pyenv, a
# virtualenv) may lack NumPy. NumPy is required so that the tests can run.
if(NOT DEFINED Python_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python_EXECUTABLE /usr/bin/python3)
endif()
find_package(Python 3 REQUIRED COMPONENTS Interpreter Development.Module NumPy)
find_package(pybind11 CONFIG REQUIRED)
pybind11_add_module(vkattn_python ${PROJECT_SOURCE_DIR}/python/vkattn_module.cpp)
set_target_properties(vkattn_python PROPERTIES OUTPUT_NAME vkattn LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/python)
target_include_directories(vkattn_python PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(vkattn_python PRIVATE vkattn_internal fmt::fmt-header-only nlohmann_json::nlohmann_json)

if(VKATTN_BUILD_TESTS)
  add_test(NAME python COMMAND ${Python_EXECUTABLE} -m unittest discover -v -s ${PROJECT_SOURCE_DIR}/python/tests)
  set_tests_properties(python PROPERTIES ENVIRONMENT "PYTHONPATH=${PROJECT_BINARY_DIR}/python;VKATTN_VALIDATION=1")
endif()

if(VKATTN_INSTALL)
  set(VKATTN_PYTHON_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/python${Python_VERSION_MAJOR}.${Python_VERSION_MINOR}/site-packages
      CACHE STRING "Where the vkattn Python module is installed, relative to the prefix")
  install(TARGETS vkattn_python LIBRARY DESTINATION ${VKATTN_PYTHON_INSTALL_DIR})
endif()
