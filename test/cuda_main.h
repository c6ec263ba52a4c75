#pragma once
// The entry point of the CUDA test programs: runs doctest where the process sees a CUDA device, else
// prints why not and exits 77 (meson's "skipped"). Include once, in the program's main file.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include <kusari/kernels/cuda/runtime.h>

#include "case_report.h"

REGISTER_LISTENER("kusari_cases", 1, kusari::testing::CaseReport);

int main(int argc, char** argv) {
  kusari::testing::set_case_program(argv[0]);
  if (kusari::cuda::device_count() == 0) {
    std::printf("skipped: %s\n", kusari::cuda::unavailable_reason().c_str());
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
