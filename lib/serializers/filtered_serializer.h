#pragma once
// FilteredSerializer: passes on only the values whose full key a predicate accepts, so part of a
// walk (a trainer's iterator positions, say) can be saved or loaded apart from the rest.

#include <functional>
#include <map>
#include <memory>
#include <string>

#include <kusari/core/api.h>
#include <kusari/core/serializer.h>

namespace kusari::serializers {

// Decides from a full key ("updater/iterator:main/epoch") whether a value is passed on.
using KeyPredicate = std::function<bool(const std::string& key)>;

// Forwards to `inner` (under the same relative keys) every value whose full key, counted from this
// serializer's root, `accept` returns true for; the others are neither saved nor loaded.
class KUSARI_API FilteredSerializer : public Serializer {
 public:
  // Filters a walk into `inner`, which must outlive this serializer. Throws ValueError for an empty predicate.
  FilteredSerializer(Serializer& inner, KeyPredicate accept);
  // The child scope `name`.
  Serializer& operator[](const std::string& name) override;
  // Passes the array on when its key is accepted.
  void operator()(const std::string& key, Array& value) override;
  // Passes the scalar on when its key is accepted.
  void operator()(const std::string& key, double& value) override;
  // Passes the scalar on when its key is accepted.
  void operator()(const std::string& key, int64_t& value) override;
  // Whether the inner serializer loads.
  bool is_loading() const override { return inner_.is_loading(); }

 private:
  FilteredSerializer(Serializer& inner, std::shared_ptr<const KeyPredicate> accept, std::string prefix);
  // Forwards (key, value) to the inner serializer when prefix + key is accepted.
  template <class T>
  void forward(const std::string& key, T& value);

  Serializer& inner_;
  std::shared_ptr<const KeyPredicate> accept_;
  std::string prefix_;
  std::map<std::string, std::unique_ptr<FilteredSerializer>> children_;
};

}  // namespace kusari::serializers
