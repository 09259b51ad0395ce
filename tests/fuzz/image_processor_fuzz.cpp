// libFuzzer harness: an image classifier's preprocessor_config.json (image_processor.h). A
// config that is read makes pixel values of a small image: as many as its size and crop say,
// whatever the class, the filter and the sizes (up and down, a crop inside or around).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "attnlab/model/image_processor.h"

using namespace attnlab;
using namespace attnlab::model;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const auto processor = parseImageProcessor(text, "preprocessor_config.json");
    if (!processor) {
        if (processor.error().empty()) std::abort();
        return 0;
    }
    // The size a 5 x 3 image comes out at: resized (to height x width, or its shorter side to
    // the shortest edge and the longer in proportion), then cropped.
    Index h = 3, w = 5;
    if (processor->resize && processor->shortestEdge > 0) {
        h = processor->shortestEdge;
        w = static_cast<Index>(static_cast<double>(processor->shortestEdge) * 5.0 / 3.0);
    } else if (processor->resize) {
        h = processor->height;
        w = processor->width;
    }
    if (h * w > 4096) return 0; // the pixels, not the memory
    if (processor->centerCrop) {
        h = processor->cropHeight;
        w = processor->cropWidth;
    }
    if (h * w > 4096) return 0;
    std::vector<std::uint8_t> rgb(5 * 3 * 3);
    for (std::size_t i = 0; i < rgb.size(); ++i)
        rgb[i] = static_cast<std::uint8_t>(i * 37);
    const auto pixels = processImage(rgb, 5, 3, *processor);
    if (!pixels) std::abort();
    if (static_cast<Index>(pixels->size()) != 3 * h * w) std::abort();
    return 0;
}
