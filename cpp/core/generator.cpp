#include "core/generator.h"

#include <cstring>
#include <sstream>

#include "core/error.h"

namespace lucid {

const GeneratorPtr& default_generator() {
  static GeneratorPtr g = std::make_shared<Generator>();
  return g;
}

std::vector<int64_t> Generator::get_state() {
  std::lock_guard<std::mutex> lock(mu);
  std::vector<int64_t> w{int64_t(seed), next_normal ? 1 : 0, 0};
  if (next_normal) std::memcpy(&w[2], &*next_normal, sizeof(double));
  std::stringstream ss;
  ss << engine;
  int64_t v;
  while (ss >> v) w.push_back(v);
  return w;
}

void Generator::set_state(const std::vector<int64_t>& w) {
  LUCID_CHECK(w.size() == 3 + 624 + 1, "set_state: expected a state of ", 3 + 624 + 1,
              " int64 words (from get_state()), got ", w.size());
  std::stringstream ss;
  for (size_t i = 3; i < w.size(); ++i) {
    LUCID_CHECK(w[i] >= 0 && w[i] <= 0xffffffffLL, "set_state: invalid generator state word ", w[i]);
    ss << w[i] << ' ';
  }
  LUCID_CHECK(w.back() <= 624, "set_state: invalid generator state position ", w.back());
  std::mt19937 e;
  ss >> e;
  LUCID_CHECK(!ss.fail(), "set_state: invalid generator state");
  std::lock_guard<std::mutex> lock(mu);
  engine = e;
  seed = uint64_t(w[0]);
  next_normal.reset();
  if (w[1]) {
    double d;
    std::memcpy(&d, &w[2], sizeof(double));
    next_normal = d;
  }
}

}  // namespace lucid
