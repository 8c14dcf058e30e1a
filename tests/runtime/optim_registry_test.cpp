// The optimizer registry (optim/registry.h): unique kinds and classes, unique field names, every
// kind constructible from its defaults once given an lr, and the embedded description naming
// each kind with its class, options and state in the table's order.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "optim/registry.h"
#include "optim/registry_description.h"

namespace apexnpu::rt::optim {
namespace {

template <typename Fields>
std::vector<std::string> names_of(const Fields& fields) {
  std::vector<std::string> names;
  std::apply([&](const auto&... field) { (names.push_back(field.name), ...); }, fields);
  return names;
}

TEST(OptimRegistry, KindsAndClassesAreUnique) {
  std::set<std::string> kinds, classes;
  for_each_optimizer_kind([&](const auto& kind) {
    EXPECT_TRUE(kinds.insert(kind.name).second) << kind.name;
    EXPECT_TRUE(classes.insert(kind.python_class).second) << kind.python_class;
  });
  EXPECT_EQ(kinds.size(), kOptimizerKindCount);
}

TEST(OptimRegistry, FieldNamesAreUniqueAndOptionsStartWithLr) {
  for_each_optimizer_kind([&](const auto& kind) {
    using Kind = std::remove_cvref_t<decltype(kind)>;
    const auto options = names_of(Kind::Options::fields());
    const auto state = names_of(Kind::Optimizer::State::fields());
    EXPECT_EQ(std::set<std::string>(options.begin(), options.end()).size(), options.size()) << kind.name;
    EXPECT_EQ(std::set<std::string>(state.begin(), state.end()).size(), state.size()) << kind.name;
    ASSERT_FALSE(options.empty());
    EXPECT_EQ(options.front(), "lr") << kind.name;
    EXPECT_FALSE(state.empty()) << kind.name;
  });
}

TEST(OptimRegistry, EveryKindsDefaultsAreValidOnceAnLrIsGiven) {
  for_each_optimizer_kind([&](const auto& kind) {
    auto options = kind.defaults;
    options.lr = 1e-3;  // sgd and bert_adam have no default lr, as torch's `required`
    EXPECT_NO_THROW(validate(options)) << kind.name;
  });
}

TEST(OptimRegistry, TheDescriptionListsEveryKindInOrder) {
  const std::string text(registry_description());
  std::size_t at = 0;
  for_each_optimizer_kind([&](const auto& kind) {
    using Kind = std::remove_cvref_t<decltype(kind)>;
    std::string entry = std::string("{\"kind\": \"") + kind.name + "\", \"class\": \"" + kind.python_class +
                        "\", \"options\": [";
    for (const auto& name : names_of(Kind::Options::fields()))
      entry += (entry.back() == '[' ? "\"" : ", \"") + name + "\"";
    entry += "], \"state\": [";
    for (const auto& name : names_of(Kind::Optimizer::State::fields()))
      entry += (entry.back() == '[' ? "\"" : ", \"") + name + "\"";
    entry += "]}";
    const std::size_t found = text.find(entry, at);
    EXPECT_NE(found, std::string::npos) << entry << "\nin\n" << text;
    if (found != std::string::npos) at = found + entry.size();
  });
  EXPECT_EQ(text.rfind("{\"schema\": 1, \"optimizers\": [", 0), 0u);
  EXPECT_EQ(text.find('\0'), std::string::npos);
}

TEST(OptimRegistry, AdamwIsAdamWithTorchsAdamwDefaults) {
  const auto& adamw = std::get<2>(kOptimizerKinds);
  EXPECT_STREQ(adamw.name, "adamw");
  EXPECT_EQ(adamw.defaults.weight_decay, 1e-2);
  EXPECT_TRUE(adamw.defaults.decoupled_weight_decay);
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(adamw)>, OptimizerKind<FusedAdam>>);
}

}  // namespace
}  // namespace apexnpu::rt::optim
