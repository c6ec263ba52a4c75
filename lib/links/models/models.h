#pragma once
// Every model of kusari::links::models.

#include <kusari/links/models/alexnet.h>
#include <kusari/links/models/alexnet_bn.h>
#include <kusari/links/models/alexnet_pool5_bn.h>
#include <kusari/links/models/mlp.h>
#include <kusari/links/models/normalization_config.h>
#include <kusari/links/models/residual_block.h>
#include <kusari/links/models/resnet.h>
#include <kusari/links/models/resnet50.h>
