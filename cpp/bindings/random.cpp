// Random generation: the Generator class (PyTorch's torch.Generator), the default generator, the
// in-place fills as Tensor methods, and the samplers bernoulli, multinomial and randperm.
#include <random>

#include "bindings/common.h"
#include "ops/binary.h"
#include "ops/random.h"

namespace lucid::bindings {

namespace {

using T = const TensorImplPtr&;

Generator* gen_arg(py::handle h, const char* op) {
  if (h.is_none()) return nullptr;
  LUCID_CHECK_DTYPE(py::isinstance<Generator>(h), op, ": generator must be a pylucid.Generator, got ", type_name(h));
  return h.cast<Generator*>();
}

double num_arg(py::handle h, const char* op, const char* what) {
  LUCID_CHECK_DTYPE(PyFloat_Check(h.ptr()) || PyLong_Check(h.ptr()), op, ": ", what, " must be a number, got ",
                    type_name(h));
  return h.cast<double>();
}

// Python ints in [-2^63, 2^64) as PyTorch takes seeds; negatives wrap.
uint64_t seed_arg(py::handle h) {
  LUCID_CHECK_DTYPE(PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr()), "manual_seed: seed must be an int, got ",
                    type_name(h));
  int overflow = 0;
  long long s = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
  if (!overflow) return uint64_t(s);
  if (overflow > 0) {
    unsigned long long u = PyLong_AsUnsignedLongLong(h.ptr());
    if (!PyErr_Occurred()) return u;
    PyErr_Clear();
  }
  throw LucidError(str("manual_seed: seed must be in [-2**63, 2**64), got ", std::string(py::str(h))));
}

uint64_t fresh_seed() {
  std::random_device rd;
  return (uint64_t(rd()) << 32) | rd();
}

TensorImplPtr state_tensor(Generator& g) {
  auto w = g.get_state();
  auto t = empty({int64_t(w.size())}, DType::Int64);
  std::copy(w.begin(), w.end(), t->data<int64_t>());
  return t;
}

void set_state(Generator& g, T state) {
  LUCID_CHECK_DTYPE(state->dtype == DType::Int64 && state->ndim() == 1,
                    "set_state: expected a 1-d int64 tensor from get_state(), got dtype ", dtype_name(state->dtype),
                    " and shape ", shape_str(state->shape));
  auto c = contiguous_raw(state);
  g.set_state(std::vector<int64_t>(c->data<int64_t>(), c->data<int64_t>() + c->numel()));
}

}  // namespace

LUCID_BINDING(random, 5) {
  py::class_<Generator, GeneratorPtr>(m, "Generator",
      "A random number generator (PyTorch's torch.Generator), drawing PyTorch's CPU stream: seeded alike, it "
      "yields the same numbers. Pass it as generator= to any random function; Generator(device='cpu').")
      .def(py::init([](py::handle device) {
             if (!device.is_none()) {
               std::string s = py::str(device);
               LUCID_CHECK(s == "cpu" || s == "cpu:0", "Generator: pylucid only has the 'cpu' device, got '", s, "'");
             }
             return std::make_shared<Generator>();
           }),
           py::arg("device") = "cpu")
      .def("manual_seed", [](const GeneratorPtr& g, py::handle seed) {
             uint64_t s = seed_arg(seed);
             std::lock_guard<std::mutex> lock(g->mu);
             g->manual_seed(s);
             return g;
           }, py::arg("seed"), "Seeds the generator (an int in [-2**63, 2**64)) and returns it.")
      .def("seed", [](const GeneratorPtr& g) {
             uint64_t s = fresh_seed();
             std::lock_guard<std::mutex> lock(g->mu);
             g->manual_seed(s);
             return s;
           }, "Seeds the generator from the operating system's entropy and returns that seed.")
      .def("initial_seed", [](const GeneratorPtr& g) { return g->seed; },
           "The seed the generator was last seeded with (PyTorch's default, 67280421310721, until then).")
      .def("get_state", [](const GeneratorPtr& g) { return state_tensor(*g); },
           "The generator's full state, PyTorch's 5056-byte image as a 1-d int64 tensor of byte values "
           "(pylucid's uint8 is int64), for set_state.")
      .def("set_state", [](const GeneratorPtr& g, T s) { set_state(*g, s); return g; }, py::arg("new_state"),
           "Restores a state returned by get_state() (or by PyTorch's get_state) and returns the generator.");
  m.attr("default_generator") = default_generator();
  m.def("_manual_seed", [](py::handle seed) {
    manual_seed(seed_arg(seed));
    return default_generator();
  });
  m.def("_seed", []() { uint64_t s = fresh_seed(); manual_seed(s); return s; });
  m.def("initial_seed", &initial_seed, "The seed of the default generator (see manual_seed).");

  def_method("uniform_", [](T t, py::handle lo, py::handle hi, py::handle g) {
        return uniform_(t, num_arg(lo, "uniform_", "from"), num_arg(hi, "uniform_", "to"), gen_arg(g, "uniform_"));
      }, py::arg("from_") = 0.0, py::arg("to") = 1.0, py::kw_only(), py::arg("generator") = py::none(),
      "Fills self (floating) in place with samples uniform in [from, to) and returns self; not recorded by "
      "autograd. Draws from generator (default: the one pylucid.manual_seed seeds) as PyTorch does.");
  def_method("normal_", [](T t, py::handle mean, py::handle std, py::handle g) {
        return normal_(t, num_arg(mean, "normal_", "mean"), num_arg(std, "normal_", "std"), gen_arg(g, "normal_"));
      }, py::arg("mean") = 0.0, py::arg("std") = 1.0, py::kw_only(), py::arg("generator") = py::none(),
      "Fills self (floating) in place with normal samples of the given mean and std and returns self; not "
      "recorded by autograd. Same stream as PyTorch's for the same seed.");
  def_method("random_", [](T t, py::handle from, py::handle to, py::handle g) {
        Generator* gen = gen_arg(g, "random_");
        if (from.is_none() && to.is_none()) return random_full_(t, gen);
        if (to.is_none()) return randint_(t, 0, int_arg(from, "random_", "to"), gen);  // random_(to)
        return randint_(t, from.is_none() ? 0 : int_arg(from, "random_", "from"), int_arg(to, "random_", "to"), gen);
      }, py::arg("from_") = py::none(), py::arg("to") = py::none(), py::kw_only(), py::arg("generator") = py::none(),
      "Fills self in place with integers: uniform in [from, to), in [0, to) given one bound, or over "
      "[0, 2**mantissa] (floats) / [0, 2**63) (int64) given none; returns self.");
  def_method("bernoulli_", [](T t, py::handle p, py::handle g) {
        if (py::isinstance<TensorImpl>(p)) {
          auto s = bernoulli(p.cast<TensorImplPtr>(), gen_arg(g, "bernoulli_"));
          LUCID_CHECK_SHAPE(s->shape == t->shape, "bernoulli_: p of shape ", shape_str(s->shape),
                            " does not match self of shape ", shape_str(t->shape));
          check_inplace(t, "bernoulli_");
          copy_into(t, s);
          t->bump_version();
          return t;
        }
        return bernoulli_(t, num_arg(p, "bernoulli_", "p"), gen_arg(g, "bernoulli_"));
      }, py::arg("p") = 0.5, py::kw_only(), py::arg("generator") = py::none(),
      "Fills self in place with 1 with probability p (a number, or a tensor of self's shape) and 0 otherwise; "
      "returns self.");
  def_method("exponential_", [](T t, py::handle l, py::handle g) {
        return exponential_(t, num_arg(l, "exponential_", "lambd"), gen_arg(g, "exponential_"));
      }, py::arg("lambd") = 1.0, py::kw_only(), py::arg("generator") = py::none(),
      "Fills self (floating) in place with exponential samples of rate lambd and returns self.");
  def_method("log_normal_", [](T t, py::handle mean, py::handle std, py::handle g) {
        return log_normal_(t, num_arg(mean, "log_normal_", "mean"), num_arg(std, "log_normal_", "std"),
                           gen_arg(g, "log_normal_"));
      }, py::arg("mean") = 1.0, py::arg("std") = 2.0, py::kw_only(), py::arg("generator") = py::none(),
      "Fills self (floating) in place with exp(N(mean, std)) samples and returns self; the stream PyTorch's "
      "CPU log_normal_ draws for the same seed.");

  const char* bern_doc =
      "0/1 samples, 1 with probability input[i] (floating, values in [0, 1]); same shape and dtype as input. "
      "With p given, every element uses probability p instead.";
  auto bern = [](T x, py::handle p, py::handle g) {
    Generator* gen = gen_arg(g, "bernoulli");
    if (p.is_none()) return bernoulli(x, gen);
    LUCID_CHECK_DTYPE(is_floating(x->dtype), "bernoulli: expected a floating tensor, got ", dtype_name(x->dtype));
    return bernoulli_(empty(x->shape, x->dtype), num_arg(p, "bernoulli", "p"), gen);
  };
  m.def("bernoulli", bern, py::arg("input").none(false), py::arg("p") = py::none(), py::kw_only(),
        py::arg("generator") = py::none(), bern_doc);
  def_method("bernoulli", bern, py::arg("p") = py::none(), py::kw_only(), py::arg("generator") = py::none(), bern_doc);

  const char* mult_doc =
      "num_samples category indices (int64) per row of input (1-d or 2-d non-negative weights, normalised per "
      "row), without replacement unless replacement=True; shape (num_samples,) or (rows, num_samples). Draws "
      "PyTorch's stream: the same seed gives the same samples.";
  auto mult = [](T x, py::handle n, bool replacement, py::handle g) {
    return multinomial(x, int_arg(n, "multinomial", "num_samples"), replacement, gen_arg(g, "multinomial"));
  };
  m.def("multinomial", mult, py::arg("input").none(false), py::arg("num_samples"), py::arg("replacement") = false,
        py::kw_only(), py::arg("generator") = py::none(), mult_doc);
  def_method("multinomial", mult, py::arg("num_samples"), py::arg("replacement") = false, py::kw_only(),
             py::arg("generator") = py::none(), mult_doc);

  m.def("_randperm", [](py::handle n, DType d, py::handle g) {
    return randperm(int_arg(n, "randperm", "n"), d, gen_arg(g, "randperm"));
  });
  m.def("_uniform_", [](T t, double lo, double hi, py::handle g) { return uniform_(t, lo, hi, gen_arg(g, "rand")); });
  m.def("_normal_", [](T t, double mean, double std, py::handle g) {
    return normal_(t, mean, std, gen_arg(g, "randn"));
  });
  m.def("_randint_", [](T t, int64_t lo, int64_t hi, py::handle g) { return randint_(t, lo, hi, gen_arg(g, "randint")); },
        py::arg("t"), py::arg("low"), py::arg("high"), py::arg("generator") = py::none());
}

}  // namespace lucid::bindings
