#include "optim/registry_description.h"

#include <array>
#include <cstddef>
#include <tuple>

#include "optim/registry.h"

namespace apexnpu::rt::optim {
namespace {

// Appends text to `out` when it is set, counting the characters either way: run once to size
// the buffer, once to fill it.
class TextSink {
 public:
  constexpr explicit TextSink(char* out) : out_(out) {}
  constexpr void put(std::string_view text) {
    for (const char c : text) {
      if (out_ != nullptr) out_[size_] = c;
      ++size_;
    }
  }
  constexpr void put_string(std::string_view text) {  // names are identifiers: no escapes
    put("\"");
    put(text);
    put("\"");
  }
  constexpr std::size_t size() const { return size_; }

 private:
  char* out_;
  std::size_t size_ = 0;
};

template <typename Fields>
constexpr void put_names(TextSink& sink, const Fields& fields) {
  sink.put("[");
  bool first = true;
  std::apply(
      [&](const auto&... field) {
        ((sink.put(first ? "" : ", "), sink.put_string(field.name), first = false), ...);
      },
      fields);
  sink.put("]");
}

constexpr std::size_t describe(char* out) {
  TextSink sink(out);
  sink.put("{\"schema\": 1, \"optimizers\": [");
  bool first = true;
  for_each_optimizer_kind([&](const auto& kind) {
    using Kind = std::remove_cvref_t<decltype(kind)>;
    sink.put(first ? "\n  {\"kind\": " : ",\n  {\"kind\": ");
    first = false;
    sink.put_string(kind.name);
    sink.put(", \"class\": ");
    sink.put_string(kind.python_class);
    sink.put(", \"options\": ");
    put_names(sink, Kind::Options::fields());
    sink.put(", \"state\": ");
    put_names(sink, Kind::Optimizer::State::fields());
    sink.put("}");
  });
  sink.put("\n]}\n");
  return sink.size();
}

constexpr std::size_t kDescriptionSize = describe(nullptr);

constexpr std::array<char, kDescriptionSize + 1> described() {
  std::array<char, kDescriptionSize + 1> text{};
  describe(text.data());
  return text;
}

// `used`: kept though nothing in the program reads it; tools read the section.
[[gnu::used, gnu::section(".apexnpu_registry")]] constexpr std::array<char, kDescriptionSize + 1>
    kDescription = described();

static_assert(kRegistrySection == ".apexnpu_registry");

}  // namespace

std::string_view registry_description() noexcept { return {kDescription.data(), kDescriptionSize}; }

}  // namespace apexnpu::rt::optim
