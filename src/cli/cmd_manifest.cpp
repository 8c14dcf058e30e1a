// apexnpu manifest: the version-compatibility matrix, and the answers to its questions: what goes
// with a PyTorch version, a torch_npu version, a CANN version, and a built wheel.
#include <fmt/ranges.h>

#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/non_empty.h"
#include "cli/text_table.h"
#include "commands/manifest.h"

namespace apexnpu::cli {

namespace {

using commands::ApexLine;
using commands::ReleaseLine;

std::string joined(const std::vector<std::string>& items) {
  return fmt::format("{}", fmt::join(items, ", "));
}

// What a release's row says besides its versions: beta, historical, a note, PyPI.
std::string remarks(const ReleaseLine& r) {
  std::vector<std::string> said;
  if (r.beta) said.push_back("beta");
  if (r.historical) said.push_back("historical");
  if (r.torch_requirement) said.push_back("PyPI, requires " + *r.torch_requirement);
  if (!r.exact) said.push_back("in the line asked, not exact");
  if (r.note) said.push_back(*r.note);
  return joined(said);
}

std::string release_table(const std::vector<ReleaseLine>& releases) {
  std::vector<std::vector<std::string>> rows = {
      {"torch_npu", "PyTorch", "CANN", "Python", "branch", "notes"}};
  for (const auto& r : releases)
    rows.push_back({r.torch_npu, r.torch, r.cann.value_or("-"), r.python.empty() ? "-" : joined(r.python),
                    r.branch.value_or("-"), remarks(r)});
  return text_table(rows);
}

std::string apex_table(const std::vector<ApexLine>& lines) {
  std::vector<std::vector<std::string>> rows = {
      {"AscendPyTorch", "PyTorch", "PyTorch branch", "Apex branch"}};
  for (const auto& a : lines) {
    std::vector<std::string> torch;
    for (const auto& t : a.pytorch) torch.push_back(t.beta ? t.version + " (beta)" : t.version);
    if (a.exact == false && !torch.empty()) torch.back() += " (pre/post-release)";
    rows.push_back({a.ascend_pytorch, joined(torch), joined(a.pytorch_branches), joined(a.apex_branches)});
  }
  return text_table(rows);
}

std::string brief(const ReleaseLine& r) {
  return fmt::format("torch_npu {} (PyTorch {}{}{})", r.torch_npu, r.torch, r.cann ? ", CANN " + *r.cann : "",
                     r.torch_requirement ? ", requires " + *r.torch_requirement : "");
}

std::string tested_text(const nlohmann::json& tested) {
  std::string text;
  for (const auto& t : tested)
    text += fmt::format("  torch {} on Python {}, {} ({})\n", t.value("torch", "?"), t.value("python", "?"),
                        t.value("device", "?"), t.value("source", "?"));
  return text;
}

std::string torch_text(const commands::TorchAnswer& a) {
  std::string text;
  if (!a.releases.empty())
    text += fmt::format("PyTorch {}: {} torch_npu release(s)\n{}", a.torch, a.releases.size(),
                        release_table(a.releases));
  else if (a.newer_than_newest)
    text +=
        fmt::format("PyTorch {} is newer than the newest torch_npu release: {}\n", a.torch, brief(*a.newest));
  else
    text += fmt::format("PyTorch {}: no torch_npu release is for it; the nearest are {} and {}\n", a.torch,
                        a.older ? brief(*a.older) : "none older", a.newer ? brief(*a.newer) : "none newer");
  if (a.python) text += fmt::format("Ascend lists Python {} for PyTorch {}\n", joined(*a.python), a.torch);
  if (!a.apex_manual.empty()) text += "The Ascend Apex-patch manual:\n" + apex_table(a.apex_manual);
  if (!a.tested_with.empty()) text += "apexnpu's wheels are tested with:\n" + tested_text(a.tested_with);
  return text;
}

std::string wheel_text(const commands::WheelAnswer& a) {
  std::string text = fmt::format("{} {} ({}), built by apexnpu {}\n", a.wheel_name, a.wheel_version,
                                 a.wheel_file, a.apexnpu_version);
  text += fmt::format("Made for: Python {} ({}-{}), {}, {}\n", a.python_version, a.python_tag, a.abi_tag,
                      a.platform_tag, a.architecture);
  if (a.upstream_commit)
    text += fmt::format("Made from: {} at {}\n", a.upstream_url.value_or("?"), *a.upstream_commit);
  if (a.emulator_file) text += fmt::format("Built beside: {}\n", *a.emulator_file);
  text += "Tested with:\n" + tested_text(a.tested_with);
  text += fmt::format("Goes with: {} torch_npu release(s) for Python {} ({}):\n", a.releases.size(),
                      a.python_line,
                      a.matrix_from == "wheel" ? "the matrix the wheel carries"
                                               : "this apexnpu's matrix; the wheel's has no releases");
  return text + release_table(a.releases);
}

std::string manifest_text(const commands::ManifestResult& result) {
  if (result.torch) return torch_text(*result.torch);
  if (result.wheel) return wheel_text(*result.wheel);
  std::string text = release_table(result.releases);
  if (!result.apex_manual.empty()) {
    if (!result.torch_npu) text = "torch_npu releases:\n" + text;
    text += "\nThe Ascend Apex-patch manual:\n" + apex_table(result.apex_manual);
  }
  if (!result.torch_npu && !result.cann) {
    text += "\nSources:\n";
    for (const auto& [key, source] : result.matrix.sources) text += fmt::format("  {}: {}\n", key, source);
  }
  return text;
}

}  // namespace

void add_manifest_command(CLI::App& app, Console& console, CommandRunner& selected) {
  auto query = std::make_shared<commands::ManifestQuery>();
  auto torch = std::make_shared<std::string>();
  auto torch_npu = std::make_shared<std::string>();
  auto cann = std::make_shared<std::string>();
  auto wheel = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "manifest", "Show the torch_npu / PyTorch / CANN / Python compatibility matrix, or answer from it");
  auto* t = cmd->add_option("--torch", *torch,
                            "Which torch_npu releases (CANN, Python, branches) go with "
                            "this PyTorch version")
                ->check(non_empty());
  auto* n = cmd->add_option("--torch-npu", *torch_npu,
                            "Which PyTorch, CANN and Python this torch_npu "
                            "version goes with")
                ->check(non_empty())
                ->excludes(t);
  auto* c = cmd->add_option("--cann", *cann, "Which torch_npu releases go with this CANN version")
                ->check(non_empty())
                ->excludes(t)
                ->excludes(n);
  cmd->add_option("WHEEL_MANIFEST", *wheel,
                  "A built wheel's <wheel>.manifest.json: what it was made for and tested with, and "
                  "what it goes with")
      ->check(non_empty())
      ->excludes(t)
      ->excludes(n)
      ->excludes(c);
  cmd->callback([&selected, &console, query, torch, torch_npu, cann, wheel] {
    selected.name = "manifest";
    selected.run = [&console, query, torch, torch_npu, cann, wheel] {
      if (!torch->empty()) query->torch = *torch;
      if (!torch_npu->empty()) query->torch_npu = *torch_npu;
      if (!cann->empty()) query->cann = *cann;
      if (!wheel->empty()) query->wheel = *wheel;
      const auto result = commands::run_manifest(*query);
      if (!console.json() && !console.quiet()) {
        std::fputs(manifest_text(result).c_str(), stdout);
        std::fflush(stdout);
      }
      return result.to_json();
    };
  });
}

}  // namespace apexnpu::cli
