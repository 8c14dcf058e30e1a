#pragma once
// A named member of a struct: how the options and state structs list their fields once, so the
// binding, the registry's description and the tests walk them instead of repeating the names.
namespace apexnpu::rt::optim {

template <typename Struct, typename Member>
struct Field {
  const char* name;  // the Python-side name (an option's keyword, a state buffer's key)
  Member Struct::*member;
};
template <typename Struct, typename Member>
Field(const char*, Member Struct::*) -> Field<Struct, Member>;

}  // namespace apexnpu::rt::optim
