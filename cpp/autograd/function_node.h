// FunctionNode: the backward node of a user-defined autograd.Function (and of any other backward
// supplied as a callback). One node per differentiable output of the forward (each with one
// output): `backward_(output_nr, grad)` returns one gradient per next edge (nullptr for none).
// The callback lives in the bindings, which check the gradients and call back into Python;
// `release_` frees the saved state after a backward without retain_graph.
#pragma once
#include <functional>
#include <string>
#include <utility>

#include "autograd/node.h"
#include "core/error.h"

namespace lucid {

struct FunctionNode final : Node {
  std::string name_;
  size_t output_nr_ = 0;
  std::function<std::vector<TensorImplPtr>(size_t, const TensorImplPtr&)> backward_;
  std::function<void()> release_;
  bool released_ = false;

  const char* name() const override { return name_.c_str(); }
  std::vector<TensorImplPtr> run(const TensorImplPtr& grad_out) override {
    LUCID_CHECK(!released_ && backward_, name_,
                ": trying to backward through the graph a second time (or to use saved tensors after they "
                "were freed); pass retain_graph=True to the first backward");
    return backward_(output_nr_, grad_out);
  }
  void release_saved() override {
    next_edges.clear();
    released_ = true;
    if (release_) release_();
  }
};

}  // namespace lucid
