// preprocessor_config.json and the pixel values transformers' ViTImageProcessor makes: Pillow's
// resampling (Pillow's src/libImaging/Resample.c: coefficients in double, normalised to 22-bit
// fixed point, a horizontal then a vertical pass rounded to 8 bits each), numpy's rescale and
// normalise (transformers' image_transforms.py).

#include "attnlab/model/image_processor.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "attnlab/io/file_io.h"
#include "attnlab/io/json_read.h"

namespace attnlab::model {
namespace {

using Json = nlohmann::json;

constexpr int kPrecisionBits = 32 - 8 - 2;

double bilinear(double x) {
    x = std::abs(x);
    return x < 1.0 ? 1.0 - x : 0.0;
}

double bicubic(double x) {
    constexpr double a = -0.5;
    x = std::abs(x);
    if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
    if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
    return 0.0;
}

/// One axis's taps: for each output position its first input, its count, and 22-bit weights.
struct Taps {
    Index size = 0; ///< weights per output position
    std::vector<Index> first, count;
    std::vector<std::int32_t> weights;
};

Taps taps(Index in, Index out, Resample filter) {
    const double support1 = filter == Resample::Bicubic ? 2.0 : 1.0;
    const double scale = static_cast<double>(in) / static_cast<double>(out);
    const double filterScale = std::max(scale, 1.0);
    const double support = support1 * filterScale;
    Taps t;
    t.size = static_cast<Index>(std::ceil(support)) * 2 + 1;
    t.first.resize(static_cast<std::size_t>(out));
    t.count.resize(static_cast<std::size_t>(out));
    t.weights.assign(static_cast<std::size_t>(out * t.size), 0);
    std::vector<double> k(static_cast<std::size_t>(t.size));
    for (Index xx = 0; xx < out; ++xx) {
        const double center = (static_cast<double>(xx) + 0.5) * scale;
        const double ss = 1.0 / filterScale;
        Index xmin = static_cast<Index>(center - support + 0.5); // truncates, as C's (int)
        if (xmin < 0) xmin = 0;
        Index xmax = static_cast<Index>(center + support + 0.5);
        if (xmax > in) xmax = in;
        xmax -= xmin;
        double sum = 0.0;
        for (Index x = 0; x < xmax; ++x) {
            const double arg = (static_cast<double>(x + xmin) - center + 0.5) * ss;
            const double w = filter == Resample::Bicubic ? bicubic(arg) : bilinear(arg);
            k[static_cast<std::size_t>(x)] = w;
            sum += w;
        }
        for (Index x = 0; x < xmax; ++x) {
            double w = k[static_cast<std::size_t>(x)];
            if (sum != 0.0) w /= sum;
            t.weights[static_cast<std::size_t>(xx * t.size + x)] = static_cast<std::int32_t>(
                w < 0 ? -0.5 + w * (1 << kPrecisionBits) : 0.5 + w * (1 << kPrecisionBits));
        }
        t.first[static_cast<std::size_t>(xx)] = xmin;
        t.count[static_cast<std::size_t>(xx)] = xmax;
    }
    return t;
}

std::uint8_t clip8(std::int64_t value) {
    if (value >= (std::int64_t{1} << kPrecisionBits << 8)) return 255;
    if (value <= 0) return 0;
    return static_cast<std::uint8_t>(value >> kPrecisionBits);
}

[[noreturn]] void refuse(const std::string& name, const std::string& what) {
    throw std::runtime_error(name + ": " + what);
}

std::vector<double> threeNumbers(const Json& json, const std::string& name, const char* key) {
    if (json.is_number()) return std::vector<double>(3, json.get<double>());
    if (!json.is_array() || json.size() != 3 ||
        !std::all_of(json.begin(), json.end(), [](const Json& v) { return v.is_number(); }))
        refuse(name, std::string("'") + key + "' must be three numbers, one per channel");
    std::vector<double> values;
    for (const Json& v : json)
        values.push_back(v.get<double>());
    return values;
}

} // namespace

std::vector<std::uint8_t> resizeLikePillow(std::span<const std::uint8_t> pixels, Index width,
                                           Index height, Index channels, Index outWidth,
                                           Index outHeight, Resample filter) {
    std::vector<std::uint8_t> current(pixels.begin(), pixels.end());
    Index curWidth = width;
    const Taps vertical = taps(height, outHeight, filter);
    Index firstRow = 0;
    Index rows = height;
    std::vector<Index> rowFirst = vertical.first;
    if (outWidth != width) {
        // Only the rows the vertical pass reads, as Pillow does.
        firstRow = vertical.first.front();
        rows = vertical.first.back() + vertical.count.back() - firstRow;
        for (Index& f : rowFirst)
            f -= firstRow;
        const Taps horizontal = taps(width, outWidth, filter);
        std::vector<std::uint8_t> next(static_cast<std::size_t>(rows * outWidth * channels));
        for (Index y = 0; y < rows; ++y)
            for (Index xx = 0; xx < outWidth; ++xx) {
                const Index xmin = horizontal.first[static_cast<std::size_t>(xx)];
                const Index n = horizontal.count[static_cast<std::size_t>(xx)];
                const std::int32_t* k =
                    &horizontal.weights[static_cast<std::size_t>(xx * horizontal.size)];
                for (Index c = 0; c < channels; ++c) {
                    std::int64_t sum = std::int64_t{1} << (kPrecisionBits - 1);
                    for (Index x = 0; x < n; ++x)
                        sum += static_cast<std::int64_t>(current[static_cast<std::size_t>(
                                   ((y + firstRow) * curWidth + xmin + x) * channels + c)]) *
                               k[x];
                    next[static_cast<std::size_t>((y * outWidth + xx) * channels + c)] = clip8(sum);
                }
            }
        current = std::move(next);
        curWidth = outWidth;
    }
    if (outHeight != height) {
        std::vector<std::uint8_t> next(static_cast<std::size_t>(outHeight * curWidth * channels));
        for (Index yy = 0; yy < outHeight; ++yy) {
            const Index ymin = rowFirst[static_cast<std::size_t>(yy)];
            const Index n = vertical.count[static_cast<std::size_t>(yy)];
            const std::int32_t* k = &vertical.weights[static_cast<std::size_t>(yy * vertical.size)];
            for (Index xx = 0; xx < curWidth; ++xx)
                for (Index c = 0; c < channels; ++c) {
                    std::int64_t sum = std::int64_t{1} << (kPrecisionBits - 1);
                    for (Index y = 0; y < n; ++y)
                        sum += static_cast<std::int64_t>(current[static_cast<std::size_t>(
                                   ((ymin + y) * curWidth + xx) * channels + c)]) *
                               k[y];
                    next[static_cast<std::size_t>((yy * curWidth + xx) * channels + c)] =
                        clip8(sum);
                }
        }
        current = std::move(next);
    }
    return current;
}

Result<ImageProcessor> parseImageProcessor(const std::string& text, const std::string& name) {
    auto parsed = detail::parseJson(text);
    if (!parsed) return Error{name + ": " + parsed.error()};
    if (!parsed->is_object()) return Error{name + ": not a JSON object"};
    ImageProcessor p;
    try {
        for (const auto& [key, value] : parsed->items()) {
            const auto flag = [&, &k = key, &v = value] {
                if (!v.is_boolean()) refuse(name, "'" + k + "' must be true or false");
                return v.get<bool>();
            };
            if (key == "image_processor_type" || key == "feature_extractor_type") {
                const std::string type = value.is_string() ? value.get<std::string>() : "";
                if (type.rfind("ViTImageProcessor", 0) != 0 &&
                    type.rfind("ViTFeatureExtractor", 0) != 0)
                    refuse(name, "'" + key + "' '" + type.substr(0, 60) +
                                     "' is not one AttnLab follows (ViTImageProcessor)");
            } else if (key == "processor_class" || key == "do_convert_rgb") {
                // which class wraps it; RGB is what processImage takes
            } else if (key == "do_resize") {
                p.resize = flag();
            } else if (key == "size") {
                if (!value.is_object() || !value.contains("height") || !value.contains("width") ||
                    value.size() != 2 || !value["height"].is_number_integer() ||
                    !value["width"].is_number_integer() ||
                    value["height"].get<std::int64_t>() <= 0 ||
                    value["width"].get<std::int64_t>() <= 0 ||
                    value["height"].get<std::int64_t>() > kMaxImageSide ||
                    value["width"].get<std::int64_t>() > kMaxImageSide)
                    refuse(name,
                           "'size' must be {\"height\": H, \"width\": W} (positive, at most " +
                               std::to_string(kMaxImageSide) + ")");
                p.height = value["height"].get<Index>();
                p.width = value["width"].get<Index>();
            } else if (key == "resample") {
                if (!value.is_number_integer() ||
                    (value.get<std::int64_t>() != 2 && value.get<std::int64_t>() != 3))
                    refuse(name, "'resample' " + value.dump().substr(0, 20) +
                                     " is not one AttnLab follows (2: bilinear, 3: bicubic)");
                p.resample = static_cast<Resample>(value.get<int>());
            } else if (key == "do_rescale") {
                p.rescale = flag();
            } else if (key == "rescale_factor") {
                if (!value.is_number() || !(value.get<double>() > 0))
                    refuse(name, "'rescale_factor' must be a positive number");
                p.rescaleFactor = value.get<double>();
            } else if (key == "do_normalize") {
                p.normalize = flag();
            } else if (key == "image_mean") {
                p.mean = threeNumbers(value, name, "image_mean");
            } else if (key == "image_std") {
                p.std = threeNumbers(value, name, "image_std");
                if (std::any_of(p.std.begin(), p.std.end(), [](double s) { return !(s != 0); }))
                    refuse(name, "'image_std' must not be 0");
            } else {
                refuse(name, "'" + key + "' is a key AttnLab does not follow");
            }
        }
    } catch (const std::runtime_error& error) {
        return Error{error.what()};
    }
    return p;
}

Result<ImageProcessor> readImageProcessor(const std::string& path) {
    // A processor's config is a few hundred bytes; a megabyte is not one.
    auto text = readFile(path, std::size_t{1} << 20);
    if (!text) return Error{text.error()};
    return parseImageProcessor(*text, path);
}

Result<ImageProcessor> readModelImageProcessor(const std::string& directory,
                                               const ModelConfig& config) {
    const std::string path =
        (std::filesystem::path(directory) / "preprocessor_config.json").string();
    std::error_code error;
    if (!std::filesystem::exists(path, error))
        return Error{path + ": missing; an image classifier needs its image processor's config"};
    Result<ImageProcessor> processor = readImageProcessor(path);
    if (!processor) return processor;
    if (processor->height != config.imageSize || processor->width != config.imageSize)
        return Error{path + ": 'size' " + std::to_string(processor->height) + " x " +
                     std::to_string(processor->width) + " but the model reads " +
                     std::to_string(config.imageSize) + " x " + std::to_string(config.imageSize)};
    return processor;
}

Result<std::vector<float>> processImage(std::span<const std::uint8_t> rgb, Index width,
                                        Index height, const ImageProcessor& p) {
    if (width <= 0 || height <= 0 || width > kMaxImageSide || height > kMaxImageSide)
        return Error{"the image is " + std::to_string(width) + " x " + std::to_string(height) +
                     " pixels; AttnLab reads images of 1 to " + std::to_string(kMaxImageSide) +
                     " pixels a side"};
    if (static_cast<Index>(rgb.size()) != width * height * 3)
        return Error{"the image's pixels are not " + std::to_string(width) + " x " +
                     std::to_string(height) + " RGB values"};
    std::vector<std::uint8_t> resized;
    Index w = width, h = height;
    if (p.resize && (p.width != width || p.height != height)) {
        resized = resizeLikePillow(rgb, width, height, 3, p.width, p.height, p.resample);
        rgb = resized;
        w = p.width;
        h = p.height;
    }
    std::vector<float> out(static_cast<std::size_t>(3 * h * w));
    for (Index c = 0; c < 3; ++c) {
        const auto mean = static_cast<float>(p.mean[static_cast<std::size_t>(c)]);
        const auto std = static_cast<float>(p.std[static_cast<std::size_t>(c)]);
        for (Index y = 0; y < h; ++y)
            for (Index x = 0; x < w; ++x) {
                const std::uint8_t v = rgb[static_cast<std::size_t>((y * w + x) * 3 + c)];
                // numpy: uint8 -> float64 times the factor -> float32; then float32 arithmetic.
                float value = p.rescale
                                  ? static_cast<float>(static_cast<double>(v) * p.rescaleFactor)
                                  : static_cast<float>(v);
                if (p.normalize) value = (value - mean) / std;
                out[static_cast<std::size_t>((c * h + y) * w + x)] = value;
            }
    }
    return out;
}

} // namespace attnlab::model
