// Grad mode: a thread-local switch; when off, ops record no backward nodes.
#pragma once

namespace lucid {

struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool on);
};

// RAII: sets grad mode for a scope and restores the previous value.
struct GradModeGuard {
  explicit GradModeGuard(bool on) : prev_(GradMode::is_enabled()) { GradMode::set_enabled(on); }
  ~GradModeGuard() { GradMode::set_enabled(prev_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool prev_;
};
struct NoGradGuard : GradModeGuard {
  NoGradGuard() : GradModeGuard(false) {}
};

}  // namespace lucid
