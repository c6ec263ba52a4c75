#pragma once
// kusari::distributed: multi-process data and model parallelism over MPI. (mpi_interop.h, which needs
// <mpi.h>, is included separately by code that works with MPI communicators directly.)

#include <kusari/distributed/abort_on_exception.h>
#include <kusari/distributed/collective_functions.h>
#include <kusari/distributed/communicator.h>
#include <kusari/distributed/communicator_options.h>
#include <kusari/distributed/cost_fit.h>
#include <kusari/distributed/cost_model.h>
#include <kusari/distributed/mnbn_model.h>
#include <kusari/distributed/mpi_error.h>
#include <kusari/distributed/mpi_session.h>
#include <kusari/distributed/multi_node_batch_normalization.h>
#include <kusari/distributed/multi_node_normalization.h>
#include <kusari/distributed/multi_node_optimizer.h>
#include <kusari/distributed/point_to_point.h>
#include <kusari/distributed/reduce_op.h>
#include <kusari/distributed/scatter_dataset.h>
#include <kusari/distributed/sum_across_ranks.h>
#include <kusari/distributed/topology.h>
