#pragma once
// Every differentiable function of kusari::functions.

#include <kusari/functions/activation.h>
#include <kusari/functions/arithmetic.h>
#include <kusari/functions/array_manipulation.h>
#include <kusari/functions/broadcast.h>
#include <kusari/functions/convolution_2d.h>
#include <kusari/functions/evaluation.h>
#include <kusari/functions/ghost_batch_normalization.h>
#include <kusari/functions/local_response_normalization.h>
#include <kusari/functions/loss.h>
#include <kusari/functions/math.h>
#include <kusari/functions/matmul.h>
#include <kusari/functions/noise.h>
#include <kusari/functions/normalization.h>
#include <kusari/functions/pooling.h>
#include <kusari/functions/reshape_transpose.h>
#include <kusari/functions/reduction.h>
#include <kusari/functions/window_2d.h>
