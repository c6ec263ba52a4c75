#pragma once
// Every optimizer, hook, schedule and helper of kusari::optimizers.

#include <kusari/optimizers/adam.h>
#include <kusari/optimizers/gradient_synchronizer.h>
#include <kusari/optimizers/hook_list.h>
#include <kusari/optimizers/hooks.h>
#include <kusari/optimizers/hyperparameter.h>
#include <kusari/optimizers/lamb.h>
#include <kusari/optimizers/lars.h>
#include <kusari/optimizers/loss_scaler.h>
#include <kusari/optimizers/momentum_sgd.h>
#include <kusari/optimizers/nesterov_ag.h>
#include <kusari/optimizers/numerics.h>
#include <kusari/optimizers/optimizer.h>
#include <kusari/optimizers/rmsprop.h>
#include <kusari/optimizers/rmsprop_warmup.h>
#include <kusari/optimizers/schedules.h>
#include <kusari/optimizers/sgd.h>
#include <kusari/optimizers/update_rule.h>
#include <kusari/optimizers/weight_decay_exclusion.h>
