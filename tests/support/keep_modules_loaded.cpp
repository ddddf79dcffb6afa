// Sanitizer builds only (cmake/Sanitize.cmake): dlclose does nothing, so the
// Vulkan loader's driver and layer libraries stay mapped until exit and
// LeakSanitizer can name the module of every allocation it reports (an
// unloaded module's frames print as "<unknown module>" and match no
// suppression). The libraries are unloaded at process exit anyway.
extern "C" int dlclose(void*) { return 0; }
