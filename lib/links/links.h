#pragma once
// Every link of kusari::links.

#include <kusari/links/batch_normalization.h>
#include <kusari/links/chain.h>
#include <kusari/links/classifier.h>
#include <kusari/links/convolution_2d.h>
#include <kusari/links/initializers.h>
#include <kusari/links/linear.h>
#include <kusari/links/link.h>
#include <kusari/links/models/models.h>
#include <kusari/links/sequential.h>
#include <kusari/links/training_mode.h>
