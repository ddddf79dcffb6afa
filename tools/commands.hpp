// Subcommands of the `vkattn` CLI, one file each.
#pragma once

#include <CLI/CLI.hpp>

#include "vkattn/caps.hpp"
#include "vkattn/plan.hpp"
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "io/npy.hpp"
#include "reference/tolerance.hpp"
#include "vkattn/context.hpp"
#include "vkattn/error.hpp"
#include "vkattn/tensor.hpp"

namespace vkattn::cli {

// A command-line value the library would reject, refused before any GPU work.
[[noreturn]] inline void bad_argument(const std::string& message) {
  throw Error(ErrorKind::invalid_argument, message);
}

// Options every device-using command shares.
struct GlobalOptions {
  std::string device;  // --device / $VKATTN_DEVICE
};

// --variant and --strict, shared by every `plan` and `run` subcommand.
struct OverrideFlags {
  std::string variant;
  bool strict = false;
  bool reduced_precision = false;  // PlanOptions::allow_reduced_precision
  PlanOptions plan_options() const;
};
void add_override_flags(CLI::App* cmd, OverrideFlags& flags, const std::string& variant_help,
                        const std::string& strict_help);

// --caps, --variant, --strict and --json of every `plan` subcommand.
struct PlanFlags {
  std::string caps_file;
  OverrideFlags overrides;
  bool json = false;
  bool explain = false;          // the explanation even with --json
  bool no_tuning_cache = false;  // PlanOptions::use_tuning_cache off
  PlanOptions plan_options() const;
};
void add_plan_flags(CLI::App* cmd, PlanFlags& flags);
// What a `plan` subcommand plans for: the device in the caps file, or the chosen device.
DeviceCaps plan_target_caps(const PlanFlags& flags, const GlobalOptions& g);
// Prints a plan as JSON (--json) or as the device's name and the explanation.
void print_plan(const DeviceCaps& caps, const PlanFlags& flags, const Plan& plan);

// --batch, --seq-len, --heads, --kv-heads and --head-dim of a decoder call
// (TextAttentionParams, BdpaParams).
template <class Params>
void add_head_options(CLI::App* cmd, Params& p) {
  cmd->add_option("--batch", p.batch, "B")->capture_default_str();
  cmd->add_option("--seq-len", p.seq_len, "S (1 = decode)")->capture_default_str();
  cmd->add_option("--heads", p.num_heads, "H")->capture_default_str();
  cmd->add_option("--kv-heads", p.num_kv_heads, "Hkv")->capture_default_str();
  cmd->add_option("--head-dim", p.head_dim, "D")->capture_default_str();
}

// Each registers its subcommand; the callback it sets runs the command and
// stores its exit status in `status`.
void add_devices_command(CLI::App& app, GlobalOptions& g, int& status);
void add_demo_command(CLI::App& app, GlobalOptions& g, int& status);
void add_check_command(CLI::App& app, GlobalOptions& g, int& status);
void add_plan_command(CLI::App& app, GlobalOptions& g, int& status);
void add_run_command(CLI::App& app, GlobalOptions& g, int& status);
void add_bench_command(CLI::App& app, GlobalOptions& g, int& status);
void add_tune_command(CLI::App& app, GlobalOptions& g, int& status);

// `vkattn run <op>` subcommands, one file each (tools/run_<op>.cpp); run_ops()
// in tools/run_ops.cpp lists them.
using AddRunOp = void (*)(CLI::App& run, GlobalOptions& g, int& status);
std::vector<AddRunOp> run_ops();

void add_run_text(CLI::App& run, GlobalOptions& g, int& status);  // tools/run_text.cpp
void add_run_vision(CLI::App& run, GlobalOptions& g, int& status);    // tools/run_vision.cpp
void add_run_posembed(CLI::App& run, GlobalOptions& g, int& status);  // tools/run_vision.cpp
void add_run_audio(CLI::App& run, GlobalOptions& g, int& status);     // tools/run_audio.cpp
void add_run_bdpa(CLI::App& run, GlobalOptions& g, int& status);      // tools/run_bdpa.cpp
// `vkattn plan vision` (tools/plan_vision.cpp), registered by add_plan_command.
void add_plan_vision(CLI::App& plan, GlobalOptions& g, int& status);
// `vkattn plan audio` (tools/plan_audio.cpp), registered by add_plan_command.
void add_plan_audio(CLI::App& plan, GlobalOptions& g, int& status);
void add_plan_bdpa(CLI::App& plan, GlobalOptions& g, int& status);  // tools/plan_bdpa.cpp

// .npy helpers of the vision and audio run ops (tools/run_vision.cpp).
struct NpyInput {
  io::NpyArray array;
  DType dtype;  // f32 ('<f4') or f16 ('<f2'), uploaded as stored
  Shape shape;
};
// Throws Error naming `name`, the expected rank/layout and what the file holds.
NpyInput read_float_npy(const std::string& path, const char* name, size_t rank, const char* layout);
Tensor upload_npy(Context& ctx, const NpyInput& in);
io::NpyArray download_npy(Context& ctx, const Tensor& t);
// A per-sequence option (tools/run_text.cpp): "N" for every sequence, or an
// .npy of 1 or B non-negative integers; nullopt when not given.
std::optional<std::vector<uint32_t>> per_sequence(const std::string& value, const char* name, uint32_t batch);
// Prints the error against the oracle; returns the exit status (0 pass, 1 fail).
int report_check(const io::NpyArray& got, const std::vector<double>& want, reference::Tolerance tol);

}  // namespace vkattn::cli
