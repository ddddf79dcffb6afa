# -DVKATTN_SANITIZE=ON: the library, CLI and tests with AddressSanitizer
# (LeakSanitizer included) and UndefinedBehaviorSanitizer; `make sanitize`
# builds it in build-sanitize/ and runs the tests.
option(VKATTN_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
if(VKATTN_SANITIZE)
  # -O0 -g1 (line tables): 2.4x less compile time than -O1 -g (measured on
  # text_attention.cpp), which keeps this CI step short on 2 cores; the tests'
  # time is lavapipe's, which is not instrumented.
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -O0 -g1)
  add_link_options(-fsanitize=address,undefined -Wl,--export-dynamic-symbol=dlclose)
  # Every executable keeps dlopened modules loaded (see the source) for leak reports.
  add_library(vkattn_keep_modules_loaded OBJECT tests/support/keep_modules_loaded.cpp)
  link_libraries(vkattn_keep_modules_loaded)
endif()
