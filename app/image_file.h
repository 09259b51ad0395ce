#pragma once
// An image file read for an image classifier: PNG, JPEG and whatever else Qt's image readers
// read, as 8-bit RGB (alpha dropped, grey and 16-bit values converted as Qt converts them). The
// header's size is checked before anything is decoded. A build without Qt (ATTNLAB_BUILD_UI
// off) reads no images and says so.

#include <cstdint>
#include <string>
#include <vector>

#include "attnlab/base/result.h"
#include "attnlab/base/tensor.h"

namespace attnlab::app {

struct RgbImage {
    Index width = 0, height = 0;
    std::vector<std::uint8_t> rgb; ///< rows top first, R, G, B interleaved
};

Result<RgbImage> readRgbImage(const std::string& path);

} // namespace attnlab::app
