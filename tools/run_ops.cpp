// The ops `vkattn run` offers.
#include "commands.hpp"

namespace vkattn::cli {

std::vector<AddRunOp> run_ops() {
  return {
      add_run_text,
      add_run_vision,
      add_run_posembed,
      add_run_audio,
      add_run_bdpa,
  };
}

}  // namespace vkattn::cli
