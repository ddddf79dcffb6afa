// The ops `vkattn run` offers.
#include "commands.hpp"

namespace vkattn::cli {

std::vector<AddRunOp> run_ops() { return {}; }

}  // namespace vkattn::cli
