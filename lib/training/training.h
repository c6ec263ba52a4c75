#pragma once
// Everything of kusari::training: the Trainer, updaters, the reporter, triggers and extensions.

#include <kusari/training/batch_statistics_averaging.h>
#include <kusari/training/best_value_trigger.h>
#include <kusari/training/dict_summary.h>
#include <kusari/training/evaluator.h>
#include <kusari/training/extension.h>
#include <kusari/training/fail_on_non_number.h>
#include <kusari/training/interval_trigger.h>
#include <kusari/training/log_report.h>
#include <kusari/training/loss_function.h>
#include <kusari/training/manual_schedule_trigger.h>
#include <kusari/training/multi_node_evaluator.h>
#include <kusari/training/multi_node_snapshot.h>
#include <kusari/training/plot_report.h>
#include <kusari/training/print_report.h>
#include <kusari/training/progress_bar.h>
#include <kusari/training/reporter.h>
#include <kusari/training/schedule_shift.h>
#include <kusari/training/serialize_values.h>
#include <kusari/training/snapshot.h>
#include <kusari/training/standard_updater.h>
#include <kusari/training/svg_plot.h>
#include <kusari/training/trainer.h>
#include <kusari/training/trigger.h>
#include <kusari/training/unit_progress.h>
#include <kusari/training/updater.h>
