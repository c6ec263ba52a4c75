#pragma once
// kusari: define-by-run deep learning in C++20. Including this header brings in the whole library;
// `kusari::F` is short for kusari::functions.

#include <kusari/version.h>
#include <kusari/core/allocator.h>
#include <kusari/core/array.h>
#include <kusari/core/config.h>
#include <kusari/core/device.h>
#include <kusari/core/dtype.h>
#include <kusari/core/error.h>
#include <kusari/core/memory_order.h>
#include <kusari/core/object_pool.h>
#include <kusari/core/parallel.h>
#include <kusari/core/profiler.h>
#include <kusari/core/random.h>
#include <kusari/core/serializer.h>
#include <kusari/core/shape.h>
#include <kusari/kernels/layer_routines.h>
#include <kusari/kernels/optimizer_routines.h>
#include <kusari/kernels/routines.h>
#include <kusari/autograd/backprop_mode.h>
#include <kusari/autograd/function_node.h>
#include <kusari/autograd/gradient_check.h>
#include <kusari/autograd/report.h>
#include <kusari/autograd/variable.h>
#include <kusari/functions/functions.h>
#include <kusari/links/links.h>
#include <kusari/distributed/distributed.h>
#include <kusari/optimizers/optimizers.h>
#include <kusari/serializers/serializers.h>
#include <kusari/data/data.h>
#include <kusari/training/training.h>

namespace kusari {
namespace F = functions;
namespace L = links;
}  // namespace kusari
