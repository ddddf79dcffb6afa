# The symbol test (ctest: library_symbols): no library vkattn builds defines a
# global Vulkan (vkX) or volk (volkX) symbol. volk names its pointers after the
# Vulkan functions; one left global in libvkattn.a would take the place of
# libvulkan's function in a program that links both (a call would jump into a
# data word), or clash with a host's own volk.
#
# cmake -DNM=... -DLIBRARIES="a.so;b.a" -P SymbolTest.cmake

foreach(lib ${LIBRARIES})
  # The symbol table; for a shared library also the dynamic one (what it exports).
  foreach(args IN ITEMS "--defined-only -g" "--defined-only -D")
    if(args STREQUAL "--defined-only -D" AND NOT lib MATCHES "\\.so")
      continue()
    endif()
    separate_arguments(arg_list UNIX_COMMAND "${args}")
    execute_process(COMMAND ${NM} ${arg_list} ${lib} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "nm ${args} ${lib}: expected exit status 0, got ${rc}\n${err}")
    endif()
    string(REGEX MATCHALL "\n[0-9a-f]* *[A-Z] (vk|volk)[A-Z][A-Za-z0-9_]*" found "\n${out}")
    if(found)
      list(LENGTH found count)
      list(GET found 0 first)
      string(STRIP "${first}" first)
      message(FATAL_ERROR "${lib} (nm ${args}): expected no global vk*/volk* symbol, got ${count}, first '${first}'")
    endif()
    string(REGEX MATCHALL "\n[0-9a-f]* *[A-Z] vkattn_" ours "\n${out}")
    list(LENGTH ours n)
    message(STATUS "${lib} (nm ${args}): no global vk*/volk* symbol, ${n} vkattn_* symbols")
  endforeach()
endforeach()
