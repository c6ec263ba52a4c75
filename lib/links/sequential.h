#pragma once
// Sequential: links and plain functions applied one after another.

#include <functional>

#include <kusari/core/api.h>
#include <kusari/links/chain.h>

namespace kusari::links {

// Applies its layers in order; links among them are its children ("0", "1", ... in link order).
class KUSARI_API Sequential : public Cloneable<Sequential, ChainList> {
 public:
  Sequential() = default;
  // Appends a link (its forward(x) is called).
  Sequential& append(std::shared_ptr<Link> link);
  // Appends a parameterless function such as F::relu.
  Sequential& append(std::function<Variable(const Variable&)> function);
  // Runs every layer on x in order.
  Variable forward(const Variable& x) override;

 protected:
  std::string type_name() const override { return "Sequential"; }

 private:
  struct Layer {
    size_t link_index;  // index among the children, or npos for a function
    std::function<Variable(const Variable&)> function;
  };
  std::vector<Layer> layers_;
};

}  // namespace kusari::links
