#include "core/op_schema.h"

#include <algorithm>
#include <map>
#include <memory>

#include "core/error.h"

namespace lucid {

// Node-based map: references handed out stay valid as more schemas register.
static std::map<std::string, OpSchema>& registry() {
  static std::map<std::string, OpSchema> r;
  return r;
}

const OpSchema& register_schema(const OpSchema& s) {
  auto [it, inserted] = registry().emplace(s.name, s);
  LUCID_CHECK(inserted, "register_schema: op '", s.name, "' registered twice");
  return it->second;
}

const OpSchema* find_schema(const std::string& name) {
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : &it->second;
}

std::vector<OpSchema> all_schemas() {
  std::vector<OpSchema> v;
  for (auto& kv : registry()) v.push_back(kv.second);
  return v;
}

const char* amp_policy_name(AmpPolicy p) {
  switch (p) {
    case AmpPolicy::Promote: return "Promote";
    case AmpPolicy::KeepInput: return "KeepInput";
    case AmpPolicy::ForceFP32: return "ForceFP32";
  }
  return "?";
}

}  // namespace lucid
