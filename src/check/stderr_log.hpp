// The log printer of the CLI and the tests: vkattn's messages on stderr, as
// "vkattn: warning: ...". Kernel selections (info) only with $VKATTN_LOG set.
#pragma once

namespace vkattn::check {

void install_stderr_log();

}  // namespace vkattn::check
