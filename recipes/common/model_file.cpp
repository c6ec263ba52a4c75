#include "model_file.h"

#include <kusari/serializers/npz.h>
#include <kusari/serializers/zip.h>

namespace kusari::recipes {

void load_model_weights(links::Link& model, const std::string& path) {
  bool snapshot = false;
  for (const std::string& name : serializers::ZipReader(path).names()) {
    snapshot = snapshot || name.rfind(kSnapshotModelPrefix, 0) == 0;
  }
  serializers::load_npz(path, model, true, snapshot ? kSnapshotModelPrefix : "");
}

}  // namespace kusari::recipes
