// VKATTN_API marks what libvkattn exports. The library is compiled with hidden
// visibility, so a shared libvkattn exports the public API and nothing else
// (no internal, fmt or JSON symbols a host could clash with).
#pragma once

#define VKATTN_API __attribute__((visibility("default")))
