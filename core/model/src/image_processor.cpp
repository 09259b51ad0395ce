// preprocessor_config.json and the pixel values transformers' image processors make: Pillow's
// resampling (Pillow's src/libImaging/Resample.c: coefficients in double, normalised to 22-bit
// fixed point, a horizontal then a vertical pass rounded to 8 bits each), numpy's rescale and
// normalise (transformers' image_transforms.py).

#include "attnlab/model/image_processor.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string_view>
#include <tuple>

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

ImageProcessor ImageProcessor::defaultsFor(ProcessorKind kind) {
    ImageProcessor p;
    p.kind = kind;
    // transformers' IMAGENET_DEFAULT and OPENAI_CLIP means and deviations.
    const std::vector<double> imagenetMean = {0.485, 0.456, 0.406};
    const std::vector<double> imagenetStd = {0.229, 0.224, 0.225};
    const std::vector<double> clipMean = {0.48145466, 0.4578275, 0.40821073};
    const std::vector<double> clipStd = {0.26862954, 0.26130258, 0.27577711};
    switch (kind) {
    case ProcessorKind::ViT:
        break;
    case ProcessorKind::DeiT:
        p.height = p.width = 256;
        p.resample = Resample::Bicubic;
        p.centerCrop = true;
        p.mean = imagenetMean;
        p.std = imagenetStd;
        break;
    case ProcessorKind::Clip:
    case ProcessorKind::Bit:
        p.shortestEdge = 224;
        p.resample = Resample::Bicubic;
        p.centerCrop = true;
        p.mean = clipMean;
        p.std = clipStd;
        break;
    }
    return p;
}

std::pair<Index, Index> ImageProcessor::outputSize() const {
    if (centerCrop) return {cropHeight, cropWidth};
    if (resize && shortestEdge == 0) return {height, width};
    return {0, 0};
}

namespace {

/// The processor class a config names ("ViTImageProcessor", its "Fast" twin, or the older
/// feature extractor).
ProcessorKind kindNamed(const Json& value, const std::string& name, const std::string& key) {
    static const std::pair<std::string_view, ProcessorKind> kKinds[] = {
        {"ViTImageProcessor", ProcessorKind::ViT},   {"ViTFeatureExtractor", ProcessorKind::ViT},
        {"DeiTImageProcessor", ProcessorKind::DeiT}, {"DeiTFeatureExtractor", ProcessorKind::DeiT},
        {"CLIPImageProcessor", ProcessorKind::Clip}, {"CLIPFeatureExtractor", ProcessorKind::Clip},
        {"BitImageProcessor", ProcessorKind::Bit}};
    const std::string type = value.is_string() ? value.get<std::string>() : "";
    for (const auto& [known, kind] : kKinds)
        if (type == known || type == std::string(known) + "Fast") return kind;
    refuse(name, "'" + key + "' '" + type.substr(0, 60) +
                     "' is not one AttnLab follows (ViTImageProcessor, DeiTImageProcessor, "
                     "CLIPImageProcessor, BitImageProcessor)");
}

/// A side of at most kMaxImageSide pixels.
Index side(const Json& value, const std::string& name, const std::string& key) {
    if (!value.is_number_integer() || value.get<std::int64_t>() <= 0 ||
        value.get<std::int64_t>() > kMaxImageSide)
        refuse(name, "'" + key + "' must be a whole number of pixels from 1 to " +
                         std::to_string(kMaxImageSide));
    return value.get<Index>();
}

/// {"height": H, "width": W}, or one number for a square.
std::pair<Index, Index> heightAndWidth(const Json& value, const std::string& name,
                                       const std::string& key) {
    if (value.is_number()) {
        const Index n = side(value, name, key);
        return {n, n};
    }
    if (!value.is_object() || value.size() != 2 || !value.contains("height") ||
        !value.contains("width"))
        refuse(name, "'" + key + "' must be {\"height\": H, \"width\": W}");
    return {side(value["height"], name, key + ".height"),
            side(value["width"], name, key + ".width")};
}

} // namespace

Result<ImageProcessor> parseImageProcessor(const std::string& text, const std::string& name) {
    auto parsed = detail::parseJson(text);
    if (!parsed) return Error{name + ": " + parsed.error()};
    if (!parsed->is_object()) return Error{name + ": not a JSON object"};
    try {
        // The class first: what the config leaves out is that class's default.
        ProcessorKind kind = ProcessorKind::ViT;
        for (const char* key : {"image_processor_type", "feature_extractor_type"})
            if (parsed->contains(key)) kind = kindNamed((*parsed)[key], name, key);
        ImageProcessor p = ImageProcessor::defaultsFor(kind);
        const bool shortestByDefault = kind == ProcessorKind::Clip || kind == ProcessorKind::Bit;
        for (const auto& [key, value] : parsed->items()) {
            const auto flag = [&, &k = key, &v = value] {
                if (!v.is_boolean()) refuse(name, "'" + k + "' must be true or false");
                return v.get<bool>();
            };
            if (key == "image_processor_type" || key == "feature_extractor_type") {
                if (kindNamed(value, name, key) != kind)
                    refuse(name, "'image_processor_type' and 'feature_extractor_type' name "
                                 "different processors");
            } else if (key == "processor_class" || key == "do_convert_rgb") {
                // which class wraps it; RGB is what processImage takes
            } else if (key == "do_resize") {
                p.resize = flag();
            } else if (key == "size") {
                if (value.is_object() && value.size() == 1 && value.contains("shortest_edge")) {
                    p.shortestEdge = side(value["shortest_edge"], name, "size.shortest_edge");
                } else if (value.is_number() && shortestByDefault) {
                    p.shortestEdge = side(value, name, "size"); // CLIP's older configs
                } else {
                    std::tie(p.height, p.width) = heightAndWidth(value, name, "size");
                    p.shortestEdge = 0;
                }
            } else if (key == "resample") {
                if (!value.is_number_integer() ||
                    (value.get<std::int64_t>() != 2 && value.get<std::int64_t>() != 3))
                    refuse(name, "'resample' " + value.dump().substr(0, 20) +
                                     " is not one AttnLab follows (2: bilinear, 3: bicubic)");
                p.resample = static_cast<Resample>(value.get<int>());
            } else if (key == "do_center_crop") {
                p.centerCrop = flag();
            } else if (key == "crop_size") {
                std::tie(p.cropHeight, p.cropWidth) = heightAndWidth(value, name, "crop_size");
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
        return p;
    } catch (const std::runtime_error& error) {
        return Error{error.what()};
    }
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
    const auto [height, width] = processor->outputSize();
    if (height == 0)
        return Error{path +
                     ": its images' size depends on each image (a shortest-edge resize "
                     "and no centre crop); the model reads " +
                     std::to_string(config.imageSize) + " x " + std::to_string(config.imageSize)};
    if (config.arch().vision.interpolatedPositions) {
        // DINOv2 reads the processor's images, whatever image_size says (loadModel).
        if (height == width && height % config.patchSize == 0) return processor;
        return Error{path + ": it makes " + std::to_string(height) + " x " + std::to_string(width) +
                     " images; the model reads square images of whole " +
                     std::to_string(config.patchSize) + "-pixel patches"};
    }
    if (height != config.imageSize || width != config.imageSize)
        return Error{path + ": it makes " + std::to_string(height) + " x " + std::to_string(width) +
                     " images ('" + (processor->centerCrop ? "crop_size" : "size") +
                     "') but the model reads " + std::to_string(config.imageSize) + " x " +
                     std::to_string(config.imageSize)};
    return processor;
}

namespace {

/// The width and height a width x height image is resized to: `size`, or (shortest edge)
/// transformers' get_resize_output_image_size(default_to_square=False), the shorter side to
/// shortest_edge and the longer int(shortest_edge * long / short); the image's own without a
/// resize.
std::pair<Index, Index> resizedSize(const ImageProcessor& p, Index width, Index height) {
    if (!p.resize) return {width, height};
    if (p.shortestEdge == 0) return {p.width, p.height};
    const Index shorter = std::min(width, height), longer = std::max(width, height);
    const auto scaled =
        static_cast<Index>(static_cast<double>(p.shortestEdge) * static_cast<double>(longer) /
                           static_cast<double>(shorter));
    return width <= height ? std::pair{p.shortestEdge, scaled} : std::pair{scaled, p.shortestEdge};
}

/// Where numpy's centre crop starts: (size - crop) // 2, floored (negative where the crop is
/// larger and the image sits in zeros, ceil((crop - size) / 2) from the top left).
Index floorHalf(Index n) {
    return n >= 0 ? n / 2 : -((-n + 1) / 2);
}

} // namespace

ImageRegion processedRegion(const ImageProcessor& p, Index width, Index height) {
    const auto w = static_cast<double>(width), h = static_cast<double>(height);
    if (!p.centerCrop || width <= 0 || height <= 0) return {0, 0, w, h};
    const auto [toWidth, toHeight] = resizedSize(p, width, height);
    const double sx = w / static_cast<double>(toWidth), sy = h / static_cast<double>(toHeight);
    return {static_cast<double>(floorHalf(toWidth - p.cropWidth)) * sx,
            static_cast<double>(floorHalf(toHeight - p.cropHeight)) * sy,
            static_cast<double>(p.cropWidth) * sx, static_cast<double>(p.cropHeight) * sy};
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
    if (p.resize) {
        const auto [toWidth, toHeight] = resizedSize(p, width, height);
        if (toWidth > kMaxImageSide || toHeight > kMaxImageSide)
            return Error{"the image is " + std::to_string(width) + " x " + std::to_string(height) +
                         " pixels; its shorter side to " + std::to_string(p.shortestEdge) +
                         " makes the longer over " + std::to_string(kMaxImageSide)};
        if (toWidth != width || toHeight != height) {
            resized = resizeLikePillow(rgb, width, height, 3, toWidth, toHeight, p.resample);
            rgb = resized;
            w = toWidth;
            h = toHeight;
        }
    }
    std::vector<std::uint8_t> cropped;
    if (p.centerCrop && (p.cropWidth != w || p.cropHeight != h)) {
        // transformers' center_crop: numpy's slice from (size - crop) // 2, floored; an image
        // smaller than the crop sits in zeros, ceil((crop - size) / 2) from the top left.
        const Index top = floorHalf(h - p.cropHeight), left = floorHalf(w - p.cropWidth);
        cropped.assign(static_cast<std::size_t>(p.cropHeight * p.cropWidth * 3), 0);
        for (Index y = 0; y < p.cropHeight; ++y) {
            const Index from = top + y;
            if (from < 0 || from >= h) continue;
            for (Index x = 0; x < p.cropWidth; ++x) {
                const Index column = left + x;
                if (column < 0 || column >= w) continue;
                for (Index c = 0; c < 3; ++c)
                    cropped[static_cast<std::size_t>((y * p.cropWidth + x) * 3 + c)] =
                        rgb[static_cast<std::size_t>((from * w + column) * 3 + c)];
            }
        }
        rgb = cropped;
        w = p.cropWidth;
        h = p.cropHeight;
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
