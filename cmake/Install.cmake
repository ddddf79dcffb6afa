# Install rules: the library, its public headers, a CMake package
# (find_package(vkattn CONFIG) -> vkattn::vkattn) and a pkg-config file.
include(CMakePackageConfigHelpers)

set(VKATTN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/vkattn)
install(TARGETS vkattn EXPORT vkattnTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/vkattn ${VKATTN_GENERATED_INCLUDE}/vkattn
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/vkattn)
install(EXPORT vkattnTargets NAMESPACE vkattn:: DESTINATION ${VKATTN_CMAKE_DIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/vkattnConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/vkattnConfig.cmake INSTALL_DESTINATION ${VKATTN_CMAKE_DIR})
# Before 1.0 a minor version may break the API: only the same minor is compatible.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(VKATTN_COMPATIBILITY SameMinorVersion)
else()
  set(VKATTN_COMPATIBILITY SameMajorVersion)
endif()
write_basic_package_version_file(${PROJECT_BINARY_DIR}/vkattnConfigVersion.cmake
                                 COMPATIBILITY ${VKATTN_COMPATIBILITY})
install(FILES ${PROJECT_BINARY_DIR}/vkattnConfig.cmake ${PROJECT_BINARY_DIR}/vkattnConfigVersion.cmake
        DESTINATION ${VKATTN_CMAKE_DIR})

# pkg-config: a static library also needs what libvkattn itself links.
if(BUILD_SHARED_LIBS)
  set(VKATTN_PC_LIBS_PRIVATE "")
else()
  set(VKATTN_PC_LIBS_PRIVATE "-ldl -lpthread -lstdc++ -lm")
endif()
file(RELATIVE_PATH VKATTN_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/vkattn.pc.in ${PROJECT_BINARY_DIR}/vkattn.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/vkattn.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
