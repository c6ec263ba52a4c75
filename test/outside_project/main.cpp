// A program outside the kusari tree, built against the installed library through pkg-config.
#include <kusari/kusari.h>

#include <iostream>

int main() {
  using namespace kusari;
  Variable x(Array::from_vector<float>({1, 2, 3}, {3}));
  Variable y = x * x + x;
  y.set_grad(Array::ones({3}));
  y.backward();
  std::cout << x.grad() << "\n";
  return x.grad().to_vector<float>() == std::vector<float>{3, 5, 7} ? 0 : 1;
}
