// The communicator's NCCL path for CUDA arrays against its MPI path for the same values on the host:
// allreduce_grad of float32, float64 and float16 arrays (strided ones too) over a float32 and a float16
// wire, written back in place on the device. Runs under mpiexec (one rank per GPU: NCCL refuses two ranks
// on one device); exits 77 (skipped) where the process sees no CUDA device.
#include "cuda_main.h"

#include <cstdio>
#include <vector>

#include <kusari/core/array.h>
#include <kusari/distributed/communicator.h>
#include <kusari/kernels/cuda/runtime.h>

using namespace kusari;
using namespace kusari::distributed;

namespace {

// This rank's contribution: values that differ by rank and index, exact in float16.
Array contribution(const Shape& shape, int rank, Dtype dtype) {
  std::vector<double> v(static_cast<size_t>(shape.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((rank + 1) * static_cast<int>(i % 13) - 6);
  return Array::from_vector(v, shape).astype(dtype);
}

}  // namespace

TEST_CASE("allreduce_grad of one GPU's arrays through NCCL equals the MPI path's on the host") {
  for (const Dtype wire : {Dtype::float32, Dtype::float16}) {
    CAPTURE(wire);
    const Communicator comm = create_communicator("ring", {.wire_dtype = wire});
    const Device gpu = Device::cuda(comm.intra_rank() % cuda::device_count());
    const std::vector<std::pair<Shape, Dtype>> specs = {{{3, 4}, Dtype::float32}, {{5}, Dtype::float64},
                                                        {{7}, Dtype::float16}, {{4, 6}, Dtype::float32}};
    std::vector<Array> host, device;
    for (const auto& [shape, dtype] : specs) {
      host.push_back(contribution(shape, comm.rank(), dtype));
      device.push_back(host.back().to(gpu));
    }
    device.back() = device.back().transpose().copy().transpose();  // a strided array is written back too
    comm.allreduce_grad(host);
    comm.allreduce_grad(device);
    for (size_t i = 0; i < host.size(); ++i) {
      CAPTURE(i);
      CHECK(device[i].device() == gpu);
      CHECK(device[i].to(Device::cpu()).to_vector<double>() == host[i].to_vector<double>());
    }
  }
}
