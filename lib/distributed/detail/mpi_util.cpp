// MPI error checks, datatype and operation mapping, and the float32-accumulating half-precision ops.

#include <kusari/distributed/detail/mpi_util.h>

#include <algorithm>
#include <array>
#include <climits>
#include <mutex>

#include <kusari/distributed/mpi_error.h>
#include <kusari/distributed/detail/wire_format.h>

namespace kusari::distributed {
namespace {

// Applies op to float values.
float apply(ReduceOp op, float a, float b) {
  switch (op) {
    case ReduceOp::sum: return a + b;
    case ReduceOp::prod: return a * b;
    case ReduceOp::max: return std::max(a, b);
    case ReduceOp::min: return std::min(a, b);
  }
  return a;
}

// inout[i] = W(op(float(in[i]), float(inout[i]))): the body of a user-defined half-precision op.
template <class W, ReduceOp Op>
void half_op(void* in, void* inout, int* len, MPI_Datatype*) {
  if constexpr (Op == ReduceOp::sum) {
    wire::add(in, dtype_of<W>(), *len, inout);
  } else {
    const W* a = static_cast<const W*>(in);
    W* b = static_cast<W*>(inout);
    for (int i = 0; i < *len; ++i) b[i] = W(apply(Op, static_cast<float>(a[i]), static_cast<float>(b[i])));
  }
}

// The four user-defined ops of one half type, created on first use.
template <class W>
MPI_Op half_mpi_op(ReduceOp op) {
  static std::once_flag once;
  static std::array<MPI_Op, 4> ops;
  std::call_once(once, [] {
    check_mpi(MPI_Op_create(&half_op<W, ReduceOp::sum>, 1, &ops[0]), "MPI_Op_create");
    check_mpi(MPI_Op_create(&half_op<W, ReduceOp::prod>, 1, &ops[1]), "MPI_Op_create");
    check_mpi(MPI_Op_create(&half_op<W, ReduceOp::max>, 1, &ops[2]), "MPI_Op_create");
    check_mpi(MPI_Op_create(&half_op<W, ReduceOp::min>, 1, &ops[3]), "MPI_Op_create");
  });
  return ops[static_cast<size_t>(op)];
}

}  // namespace

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::prod: return "prod";
    case ReduceOp::max: return "max";
    case ReduceOp::min: return "min";
  }
  return "?";
}

void check_mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw MpiError(cat(call, " failed: ", std::string(text, static_cast<size_t>(length))));
}

int mpi_count(int64_t n, const char* op) {
  if (n > INT_MAX) throw ValueError(cat(op, ": expected at most ", INT_MAX, " elements per MPI call, got ", n));
  return static_cast<int>(n);
}

MPI_Datatype mpi_datatype(Dtype dtype) {
  switch (dtype) {
    case Dtype::float32: return MPI_FLOAT;
    case Dtype::float16: return MPI_UINT16_T;
    case Dtype::bfloat16: return MPI_UINT16_T;
    case Dtype::float64: return MPI_DOUBLE;
    case Dtype::int32: return MPI_INT32_T;
    case Dtype::int64: return MPI_INT64_T;
    case Dtype::uint8: return MPI_UINT8_T;
    case Dtype::bool_: return MPI_C_BOOL;
  }
  throw DtypeError("mpi_datatype: unknown dtype");
}

MPI_Op mpi_op(ReduceOp op, Dtype dtype) {
  if (dtype == Dtype::float16) return half_mpi_op<float16_t>(op);
  if (dtype == Dtype::bfloat16) return half_mpi_op<bfloat16_t>(op);
  if (dtype == Dtype::bool_) {
    if (op == ReduceOp::max) return MPI_LOR;
    if (op == ReduceOp::min) return MPI_LAND;
    throw DtypeError(cat("allreduce: ", reduce_op_name(op), " is not defined for bool (use max or min)"));
  }
  switch (op) {
    case ReduceOp::sum: return MPI_SUM;
    case ReduceOp::prod: return MPI_PROD;
    case ReduceOp::max: return MPI_MAX;
    case ReduceOp::min: return MPI_MIN;
  }
  return MPI_SUM;
}

int comm_rank(MPI_Comm comm) {
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  return rank;
}

int comm_size(MPI_Comm comm) {
  int size = 0;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  return size;
}

}  // namespace kusari::distributed
