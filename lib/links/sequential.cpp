#include <kusari/links/sequential.h>

namespace kusari::links {

Sequential& Sequential::append(std::shared_ptr<Link> link) {
  ChainList::append(std::move(link));
  layers_.push_back(Layer{size() - 1, nullptr});
  return *this;
}

Sequential& Sequential::append(std::function<Variable(const Variable&)> function) {
  if (!function) throw ValueError("Sequential::append: the function is empty");
  layers_.push_back(Layer{std::string::npos, std::move(function)});
  return *this;
}

Variable Sequential::forward(const Variable& x) {
  Variable h = x;
  for (const Layer& layer : layers_) {
    h = layer.function ? layer.function(h) : (*this)[layer.link_index]->forward(h);
  }
  return h;
}

}  // namespace kusari::links
