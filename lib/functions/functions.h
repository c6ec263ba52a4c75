#pragma once
// Every differentiable function of kusari::functions.

#include <kusari/functions/arithmetic.h>
#include <kusari/functions/broadcast.h>
#include <kusari/functions/convolution_2d.h>
#include <kusari/functions/math.h>
#include <kusari/functions/pooling.h>
#include <kusari/functions/window_2d.h>
