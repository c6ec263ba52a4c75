#pragma once
// Every part of kusari::data: data sets, readers, image pipelines and iterators.

#include <kusari/data/batch_schedule.h>
#include <kusari/data/binary_file.h>
#include <kusari/data/concat_examples.h>
#include <kusari/data/dataset.h>
#include <kusari/data/idx_file.h>
#include <kusari/data/image.h>
#include <kusari/data/image_transform.h>
#include <kusari/data/in_memory_labeled_image_dataset.h>
#include <kusari/data/iterator.h>
#include <kusari/data/jpeg.h>
#include <kusari/data/label_list.h>
#include <kusari/data/labeled_image_dataset.h>
#include <kusari/data/mnist.h>
#include <kusari/data/multithread_iterator.h>
#include <kusari/data/random_stream.h>
#include <kusari/data/serial_iterator.h>
#include <kusari/data/sub_dataset.h>
#include <kusari/data/transform_dataset.h>
#include <kusari/data/tuple_dataset.h>
