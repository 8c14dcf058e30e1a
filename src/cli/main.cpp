// apexnpu: builds an Ascend-NPU edition of NVIDIA Apex. Errors are caught here, once.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/console.h"
#include "core/error.h"

using apexnpu::ExitCode;

int main(int argc, char** argv) {
  apexnpu::cli::Console console;
  CLI::App app{"apexnpu: build an Ascend-NPU edition of NVIDIA Apex", "apexnpu"};
  app.require_subcommand(1);
  app.fallthrough();
  app.set_version_flag("--version", std::string("apexnpu ") + APEXNPU_VERSION);
  bool json = false;
  int verbose = 0;
  bool quiet = false;
  app.add_flag("--json", json, "Print one JSON document describing the result on stdout");
  app.add_flag("-v,--verbose", verbose, "Say more (repeat for even more)");
  app.add_flag("-q,--quiet", quiet, "Print only errors");

  apexnpu::cli::CommandRunner selected;
  for (auto add : apexnpu::cli::all_commands()) add(app, console, selected);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return static_cast<int>(ExitCode::usage);
  }
  console.set_json(json);
  console.set_verbosity(quiet ? -1 : verbose);

  const auto started = std::chrono::steady_clock::now();
  nlohmann::json result;
  int code = static_cast<int>(ExitCode::ok);
  try {
    result = selected.run();
  } catch (const apexnpu::Error& e) {
    console.error(e.what(), e.hint());
    code = static_cast<int>(e.exit_code());
    result = e.result().is_object() ? e.result() : nlohmann::json::object();
    result["error"] = {{"message", e.what()}, {"hint", e.hint()}};
  } catch (const std::exception& e) {
    console.error(e.what());
    code = static_cast<int>(ExitCode::failure);
    result = {{"error", {{"message", e.what()}, {"hint", ""}}}};
  }
  if (json) {
    if (!result.is_object()) result = nlohmann::json::object();
    result["command"] = selected.name;
    result["ok"] = code == 0;
    result["exit_code"] = code;
    result["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::puts(result.dump(2).c_str());
  }
  return code;
}
