#pragma once
/// An image classifier's preprocessor_config.json, and the pixel values it makes of an RGB
/// image, as transformers' ViTImageProcessor, DeiTImageProcessor, CLIPImageProcessor and
/// BitImageProcessor make them: resize to `size` (height x width, or the shortest edge) with
/// Pillow's resampling (its 8-bit fixed-point filters: a horizontal pass, then a vertical one,
/// each rounded to 8 bits), the centre crop (numpy's slice, zeros around a smaller image),
/// rescale (times rescale_factor, in float64, stored as float32), normalise ((x - mean) / std in
/// float32), channels first. A key AttnLab does not understand is refused naming it. Decoding
/// PNG or JPEG is the caller's (the core reads no image files).
///
///   auto processor = readImageProcessor(dir + "/preprocessor_config.json");
///   auto pixels = processImage(rgb, width, height, *processor);   // [3, H, W] floats
///   auto run = runImage(model, *pixels);

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/base/result.h"
#include "attnlab/base/tensor.h"
#include "attnlab/model/config.h"

namespace attnlab::model {

/// Pillow's filters (PIL.Image.Resampling), by the number transformers saves.
enum class Resample { Bilinear = 2, Bicubic = 3 };

/// The processors AttnLab follows, by their class; each has its own defaults for what a
/// config leaves out.
enum class ProcessorKind { ViT, DeiT, Clip, Bit };

struct ImageProcessor {
    ProcessorKind kind = ProcessorKind::ViT;
    bool resize = true;
    /// The size to resize to: height x width, or (shortestEdge > 0) the shorter side to
    /// shortestEdge and the longer in proportion, truncated (CLIP's and BiT's "shortest_edge").
    Index height = 224, width = 224;
    Index shortestEdge = 0;
    Resample resample = Resample::Bilinear;
    /// Then the centre cropHeight x cropWidth (zeros around an image smaller than that).
    bool centerCrop = false;
    Index cropHeight = 224, cropWidth = 224;
    bool rescale = true;
    double rescaleFactor = 1.0 / 255.0;
    bool normalize = true;
    std::vector<double> mean = {0.5, 0.5, 0.5};
    std::vector<double> std = {0.5, 0.5, 0.5};

    /// The processor's defaults for a config that names `kind` (transformers' class defaults).
    static ImageProcessor defaultsFor(ProcessorKind kind);
    /// The height and width of every image it makes; 0 x 0 when that depends on the image (a
    /// shortest-edge resize without a crop, or no resize and no crop).
    std::pair<Index, Index> outputSize() const;
};

/// The largest image processImage takes (either side), so a header claiming more is refused
/// before anything is allocated.
constexpr Index kMaxImageSide = 16384;

/// preprocessor_config.json's text; `name` starts every message.
Result<ImageProcessor> parseImageProcessor(const std::string& text, const std::string& name);
Result<ImageProcessor> readImageProcessor(const std::string& path);
/// The image processor of the image classifier in `directory` (its preprocessor_config.json),
/// checked against the model: its size must be config.imageSize square (DINOv2: square, in
/// whole patches; the model reads what it makes). Errors name the file:
/// missing, unreadable, a key not followed, another size.
Result<ImageProcessor> readModelImageProcessor(const std::string& directory,
                                               const ModelConfig& config);

/// Pillow's resize of an 8-bit image with `channels` interleaved values per pixel, to
/// outWidth x outHeight, with `filter`: the same bytes Pillow gives.
std::vector<std::uint8_t> resizeLikePillow(std::span<const std::uint8_t> pixels, Index width,
                                           Index height, Index channels, Index outWidth,
                                           Index outHeight, Resample filter);

/// The part of a width x height image that the processed image shows, in the image's own
/// pixels: all of it after a resize alone; after a centre crop, the crop scaled back to the
/// image (reaching past it where the crop is larger than the resized image, which then sits in
/// zeros). What a view draws under the patches, so each patch covers what the model read.
struct ImageRegion {
    double x = 0, y = 0, width = 0, height = 0;
};
ImageRegion processedRegion(const ImageProcessor& processor, Index width, Index height);

/// The pixel values [3, H, W] (row-major, float32) of an RGB image, 8 bits a value, rows top
/// first, `width` x `height`, interleaved R, G, B. Errors: an empty or oversized image, or
/// pixels of another count.
Result<std::vector<float>> processImage(std::span<const std::uint8_t> rgb, Index width,
                                        Index height, const ImageProcessor& processor);

} // namespace attnlab::model
