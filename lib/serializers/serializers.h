#pragma once
// Everything of kusari::serializers: NPZ checkpoints and the .npy and zip layers under them, in-memory
// serialization and key filtering.

#include <kusari/serializers/array_dict.h>
#include <kusari/serializers/atomic_file.h>
#include <kusari/serializers/filtered_serializer.h>
#include <kusari/serializers/npy.h>
#include <kusari/serializers/npz.h>
#include <kusari/serializers/zip.h>
