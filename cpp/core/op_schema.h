// OpSchema: what every recordable op declares once, and the registry that lists them.
// amp_policy says what the op does under autocast (see core/autocast.h); produces_grad says
// whether the op records a backward node.
#pragma once
#include <string>
#include <vector>

namespace lucid {

enum class AmpPolicy { Promote, KeepInput, ForceFP32 };

struct OpSchema {
  const char* name;
  int version;
  AmpPolicy amp_policy;
  bool produces_grad;
};

// Registers a schema and returns it, so ops write
//   const OpSchema schema_v1 = register_schema({.name = ..., ...});
// Registering one name twice is a programming error and throws at load time.
const OpSchema& register_schema(const OpSchema& s);
const OpSchema* find_schema(const std::string& name);  // nullptr when unknown
std::vector<OpSchema> all_schemas();                   // sorted by name
const char* amp_policy_name(AmpPolicy p);

}  // namespace lucid
