// libFuzzer target: JPEG (and PNG) decoding, then the training transform (random resized crop and
// flip) and the evaluation transform (shorter side, centre crop) of the image pipeline.

#include <kusari/data/image_decode.h>
#include <kusari/data/image_transform.h>

#include "fuzz_input.h"

using namespace kusari;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<uint8_t> bytes = fuzz::input_bytes(data, size);
  fuzz::expect_kusari_error_or_success([&] {
    const data::ImageSize header = data::image_size(bytes, "input.jpg");
    // Larger images are decoded at a reduced scale, as the pipeline does, so that one input stays fast.
    const data::Image image = data::decode_image(bytes, "input.jpg", std::min<int64_t>(header.height, 64),
                                                 std::min<int64_t>(header.width, 64));
    data::ImageOptions train{.crop_height = 16, .crop_width = 16, .random_flip = true, .seed = 1,
                             .random_resized_crop = true};
    data::check_image_options(train);
    data::augment_image(data::resize_image(image, train), train, 3, 1, "input.jpg");
    data::ImageOptions eval{.crop_height = 16, .crop_width = 16, .resize_shorter = 20};
    data::check_image_options(eval);
    data::augment_image(data::resize_image(image, eval), eval, 0, 0, "input.jpg");
  });
  return 0;
}
