/* volk's definitions, compiled with its symbols renamed (volk.hpp says why). */
#include "volk_names.h"
#include <volk.c>
