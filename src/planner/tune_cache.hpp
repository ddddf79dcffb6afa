// The tuning cache `vkattn tune` writes: for each device (vendor id, device id,
// driver), family and shape bucket, the variant and tuning values that timed
// fastest. JSON in $VKATTN_TUNE_CACHE, else $XDG_CACHE_HOME/vkattn/tune.json,
// else ~/.cache/vkattn/tune.json. Without a file the rules decide.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "planner/selection_log.hpp"
#include "vkattn/caps.hpp"
#include "vkattn/error.hpp"
#include "vkattn/plan.hpp"

namespace vkattn::planner {

struct TuneEntry {
  std::string variant;
  uint32_t splits = 0;     // 0: the planner's choice
  uint32_t tile_keys = 0;  // 0: the planner's choice
  double ms = 0.0;         // the time it was chosen by
  uint32_t rows = 0;       // query rows per workgroup; 0: the planner's choice
  bool operator==(const TuneEntry&) const = default;
};

// "vendor_id:device_id:driver_info" of a device.
std::string tune_device_key(const DeviceCaps& caps);

class TuneTable {
 public:
  // Entries of the file at `path`; none when it does not exist. A file that is
  // not a tuning cache is an Error naming the path and the field.
  static TuneTable load(const std::string& path);
  void save(const std::string& path) const;  // creates the directory

  const TuneEntry* find(const DeviceCaps& caps, PlanFamily family, const std::string& bucket) const;
  void set(const DeviceCaps& caps, PlanFamily family, const std::string& bucket, TuneEntry entry);
  size_t size() const { return entries_.size(); }

 private:
  std::map<std::string, TuneEntry> entries_;  // "device|family|bucket"
};

// The file the process reads and `vkattn tune` writes.
std::string tune_cache_path();
// The process's table, read once; reload_tune_table() reads it again and makes cached plans stale.
std::shared_ptr<const TuneTable> process_tune_table();
void reload_tune_table();

// Plans with the cache's entry for this bucket when the options leave the
// choice to the planner: the entry becomes a strict override, so the
// capability filter re-checks it; one it rejects (stale, hand-edited) is
// ignored with one warning and the rules decide. `plan(options)` returns a
// family plan with `reason`, `warnings` and a `tuned` flag.
template <class Plan, class PlanFn>
Plan plan_with_tuning(const DeviceCaps& caps, PlanFamily family, const std::string& bucket,
                      const PlanOptions& options, PlanFn plan) {
  const bool free_choice = options.use_tuning_cache && options.variant.empty() && options.path.empty() &&
                           !options.splits && !options.tile_keys && !options.rows;
  const auto table = free_choice ? process_tune_table() : nullptr;
  const TuneEntry* e = table ? table->find(caps, family, bucket) : nullptr;
  if (!e) return plan(options);
  PlanOptions tuned = options;
  tuned.variant = e->variant;
  tuned.splits = e->splits;
  tuned.tile_keys = e->tile_keys;
  tuned.rows = e->rows;
  tuned.strict = true;
  try {
    Plan p = plan(tuned);
    // Naming a variant overrides the precision policy; an entry may not.
    bool eligible = false;
    for (const auto& c : p.candidates) eligible |= c.variant == e->variant && c.eligible;
    if (!eligible)
      throw Error(ErrorKind::unsupported, "variant '" + e->variant + "' is not eligible for this call and options");
    p.reason = "tuned: the tuning cache's entry for this device and shape bucket (" + bucket + ")";
    p.tuned = true;
    return p;
  } catch (const Error& err) {
    Plan p = plan(options);
    p.warnings.push_back("tuning cache entry for " + bucket + " ignored: " + err.what());
    warn_once(p.warnings.back());
    return p;
  }
}

}  // namespace vkattn::planner
