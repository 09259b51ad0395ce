// libFuzzer harness: an image classifier's preprocessor_config.json (image_processor.h). A
// config that is read makes pixel values of a small image: as many as its size says, whatever
// the filter and the sizes (up and down).
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
    if (processor->height * processor->width > 4096) return 0; // the pixels, not the memory
    std::vector<std::uint8_t> rgb(5 * 3 * 3);
    for (std::size_t i = 0; i < rgb.size(); ++i)
        rgb[i] = static_cast<std::uint8_t>(i * 37);
    const auto pixels = processImage(rgb, 5, 3, *processor);
    if (!pixels) std::abort();
    const Index h = processor->resize ? processor->height : 3;
    const Index w = processor->resize ? processor->width : 5;
    if (static_cast<Index>(pixels->size()) != 3 * h * w) std::abort();
    return 0;
}
