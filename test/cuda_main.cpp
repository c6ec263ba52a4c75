// The entry point of CUDA test programs built from several files (cuda_main.h: skipped without a GPU).
#include "cuda_main.h"
