#include "vkattn/version.hpp"

namespace vkattn {

std::string_view version() { return VKATTN_VERSION_STRING; }

}  // namespace vkattn
