#include <kusari/serializers/filtered_serializer.h>

#include <kusari/core/error.h>

namespace kusari::serializers {

FilteredSerializer::FilteredSerializer(Serializer& inner, KeyPredicate accept)
    : inner_(inner), accept_(std::make_shared<const KeyPredicate>(std::move(accept))) {
  if (!*accept_) throw ValueError("FilteredSerializer: expected a key predicate, got an empty function");
}

FilteredSerializer::FilteredSerializer(Serializer& inner, std::shared_ptr<const KeyPredicate> accept,
                                       std::string prefix)
    : inner_(inner), accept_(std::move(accept)), prefix_(std::move(prefix)) {}

Serializer& FilteredSerializer::operator[](const std::string& name) {
  auto& child = children_[name];
  if (!child) child.reset(new FilteredSerializer(inner_[name], accept_, prefix_ + name + "/"));
  return *child;
}

template <class T>
void FilteredSerializer::forward(const std::string& key, T& value) {
  if ((*accept_)(prefix_ + key)) inner_(key, value);
}

void FilteredSerializer::operator()(const std::string& key, Array& value) { forward(key, value); }

void FilteredSerializer::operator()(const std::string& key, double& value) { forward(key, value); }

void FilteredSerializer::operator()(const std::string& key, int64_t& value) { forward(key, value); }

}  // namespace kusari::serializers
