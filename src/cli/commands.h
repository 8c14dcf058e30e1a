#pragma once
// Each command lives in its own cmd_*.cpp and adds itself to the app through an adder listed in
// commands.cpp. A command's run prints its typed result (commands/*.h) for people and returns
// that result's to_json(), the document --json prints; it throws apexnpu::Error on failure.
#include <CLI/CLI.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <span>

#include "cli/console.h"

namespace apexnpu::cli {

// The command chosen on the command line, run once parsing succeeded.
struct CommandRunner {
  std::string name;
  std::function<nlohmann::json()> run;
};

using CommandAdder = void (*)(CLI::App& app, Console& console, CommandRunner& selected);

std::span<const CommandAdder> all_commands();

}  // namespace apexnpu::cli
