#pragma once
// Reductions over axes: sum, mean, max, min, logsumexp, and the non-differentiable argmax.
// Axes may be negative; an empty list reduces over every axis; a repeated or out-of-range axis throws
// IndexError naming the operation.

#include <optional>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>

namespace kusari::functions {

// Sum of the elements over `axes`; integer and bool inputs sum to int64.
KUSARI_API Variable sum(const Variable& x, const std::vector<int64_t>& axes = {}, bool keepdims = false);
// Mean of the elements over `axes` (floating dtypes).
KUSARI_API Variable mean(const Variable& x, const std::vector<int64_t>& axes = {}, bool keepdims = false);
// Largest element over `axes`; the gradient goes to every element equal to the maximum.
KUSARI_API Variable max(const Variable& x, const std::vector<int64_t>& axes = {}, bool keepdims = false);
// Smallest element over `axes`; the gradient goes to every element equal to the minimum.
KUSARI_API Variable min(const Variable& x, const std::vector<int64_t>& axes = {}, bool keepdims = false);
// Index of the largest element along `axis` (of the flattened array when absent), as an int64 constant.
KUSARI_API Variable argmax(const Variable& x, std::optional<int64_t> axis = {}, bool keepdims = false);
// log(sum(exp(x))) over `axes`, computed as m + log(sum(exp(x - m))) with m the maximum (floating dtypes).
KUSARI_API Variable logsumexp(const Variable& x, const std::vector<int64_t>& axes = {}, bool keepdims = false);

}  // namespace kusari::functions
