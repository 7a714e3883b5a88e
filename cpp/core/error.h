// Typed errors of the core. Python maps them (bindings/module.cpp) to
// LucidError (RuntimeError), ShapeMismatch (ValueError), DtypeMismatch (TypeError)
// and IndexOutOfRange (IndexError); all derive from LucidError.
// Messages name the op, what it got and what it expected.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace lucid {

struct LucidError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct ShapeMismatch : LucidError {
  using LucidError::LucidError;
};
struct DtypeMismatch : LucidError {
  using LucidError::LucidError;
};
struct IndexOutOfRange : LucidError {
  using LucidError::LucidError;
};

namespace detail {
inline void cat_(std::ostringstream&) {}
template <class T, class... R>
void cat_(std::ostringstream& os, const T& v, const R&... rest) {
  os << v;
  cat_(os, rest...);
}
}  // namespace detail

// Builds a message from streamable pieces: str("sum: dim ", d, " out of range").
template <class... A>
std::string str(const A&... a) {
  std::ostringstream os;
  detail::cat_(os, a...);
  return os.str();
}

}  // namespace lucid

#define LUCID_CHECK_AS(Exc, cond, ...) \
  do {                                 \
    if (!(cond)) throw ::lucid::Exc(::lucid::str(__VA_ARGS__)); \
  } while (0)
#define LUCID_CHECK(cond, ...) LUCID_CHECK_AS(LucidError, cond, __VA_ARGS__)
#define LUCID_CHECK_SHAPE(cond, ...) LUCID_CHECK_AS(ShapeMismatch, cond, __VA_ARGS__)
#define LUCID_CHECK_DTYPE(cond, ...) LUCID_CHECK_AS(DtypeMismatch, cond, __VA_ARGS__)
#define LUCID_CHECK_INDEX(cond, ...) LUCID_CHECK_AS(IndexOutOfRange, cond, __VA_ARGS__)
