#pragma once
// Initialisation of a parameter whose shape comes from the first input.

#include <kusari/links/link.h>

namespace kusari::links {

// Gives the uninitialised parameter `name` of `link` its shape and places it on the input's device.
inline Variable initialize_lazy_param(Link& link, const std::string& name, const Shape& shape, const Variable& input) {
  Variable param = link.initialize_param(name, shape);
  if (!(param.device() == input.device())) param.set_data(param.data().to(input.device()));
  return param;
}

}  // namespace kusari::links
