#pragma once
// Recipe: what one paper states of its own — defaults, hyperparameter flags, optimizer, schedule and
// extensions — and run_recipe(), the shared run loop every paper's executable calls from main().

#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <kusari/links/link.h>
#include <kusari/optimizers/optimizer.h>
#include <kusari/training/trainer.h>

#include "settings.h"

namespace kusari::recipes {

// One paper's recipe; each paper derives one (recipes/<paper>.cpp) and its executable passes it to
// run_recipe().
class Recipe {
 public:
  // A recipe run as `name` ("goyal2017") whose --help starts with `description` (one line).
  Recipe(std::string name, std::string description) : name_(std::move(name)), description_(std::move(description)) {}
  virtual ~Recipe() = default;
  // The executable's name.
  const std::string& name() const { return name_; }
  // What it reproduces, in one line.
  const std::string& description() const { return description_; }
  // The preset a command line without --preset runs.
  virtual Preset default_preset() const { return Preset::imagenet; }
  // The common settings' defaults for `preset` (the model given by --model, if any, is `model`).
  virtual Settings defaults(Preset preset, const std::string& model) const = 0;
  // Adds the paper's own hyperparameters to `app`, with the paper's values as defaults.
  virtual void add_flags(CLI::App& app) = 0;
  // Resolves defaults that depend on other flags (epoch-scaled milestones, lr from B) once all are
  // parsed, and checks the combination; throws FlagError.
  virtual void resolve(const Settings& settings) { (void)settings; }
  // The paper's optimizer, set up on `model` with its hooks (it is made multi-node afterwards).
  virtual std::shared_ptr<optimizers::Optimizer> make_optimizer(const std::shared_ptr<links::Link>& model) = 0;
  // Adds the paper's trainer extensions (its learning-rate schedule).
  virtual void extend(training::Trainer& trainer) = 0;

 private:
  std::string name_, description_;
};

// Parses the flags (exit status 2 with a message on a bad one, 0 after --help), writes args.json, and
// trains data-parallel over the ranks of mpiexec (or one process): an error on any rank ends the job
// with status 1. Returns the process's exit status.
int run_recipe(int argc, char** argv, Recipe& recipe);

}  // namespace kusari::recipes
