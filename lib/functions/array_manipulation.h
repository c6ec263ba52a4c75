#pragma once
// Functions that rearrange, join, split, index or convert arrays without other arithmetic.

#include <kusari/functions/broadcast.h>
#include <kusari/functions/cast.h>
#include <kusari/functions/concat_stack_split.h>
#include <kusari/functions/get_item.h>
#include <kusari/functions/reshape_transpose.h>
