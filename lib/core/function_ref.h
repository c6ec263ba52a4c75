#pragma once
// FunctionRef: a non-owning reference to a callable, cheaper than std::function (never allocates).
// The referenced callable must outlive the call.

#include <type_traits>
#include <utility>

namespace kusari {

template <class Signature>
class FunctionRef;

// Refers to any callable with the signature R(Args...).
template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  // Refers to `callable` (which must outlive this reference).
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef>>>
  FunctionRef(F&& callable)  // NOLINT: implicit, like std::function
      : object_(const_cast<void*>(static_cast<const void*>(&callable))),
        call_([](void* object, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(object))(std::forward<Args>(args)...);
        }) {}
  // Calls the referenced callable.
  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace kusari
