#pragma once
// Every differentiable function of kusari::functions.

#include <kusari/functions/arithmetic.h>
#include <kusari/functions/array_manipulation.h>
#include <kusari/functions/broadcast.h>
#include <kusari/functions/math.h>
#include <kusari/functions/reduction.h>
