// The override handling every family's planner shares: which variant a call's
// options name, strict rejection or one warning and a fallback, the reason
// text, and the options a family does not honour.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "vkattn/plan.hpp"

namespace vkattn::planner {

// The variant the options name for this call: `variant`, else the first
// kernel-path entry matching (phase, layer); empty when none does.
std::string requested_variant(const PlanOptions& options, Phase phase);

// Families without kernel paths or tuning overrides (vision, audio: path,
// splits, tile_keys, rows) reject them: an Error naming the option, never a
// silent no-op.
void reject_unhonoured_options(std::string_view family, const PlanOptions& options);

// The message for an override naming no variant of `family`.
std::string unknown_variant(std::string_view family, std::string_view name);

// An override that cannot run this call (`why`): strict makes it an Error
// (invalid_argument when the name is unknown, else unsupported); otherwise one
// warning, kept in `warnings` and logged once, and selection falls back.
void reject_override(const std::string& why, bool known, const PlanOptions& options,
                     std::vector<std::string>& warnings);

// The reason of a rule's winner: marked as a fallback when an override was rejected.
std::string rule_reason(std::string_view reason, bool override_rejected);

}  // namespace vkattn::planner
