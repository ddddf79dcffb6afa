# The vkattn CLI, one file per subcommand (tools/).
find_package(CLI11 REQUIRED)
file(GLOB VKATTN_CLI_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tools/*.cpp)
add_executable(vkattn_cli ${VKATTN_CLI_SOURCES})
set_target_properties(vkattn_cli PROPERTIES OUTPUT_NAME vkattn)
target_include_directories(vkattn_cli PRIVATE ${PROJECT_SOURCE_DIR}/tools)
target_link_libraries(vkattn_cli PRIVATE vkattn_testkit CLI11::CLI11 ${VKATTN_STATIC_RUNTIME})
