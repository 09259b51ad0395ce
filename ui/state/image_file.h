#pragma once
/// An image file read for an image classifier: PNG, JPEG and whatever else Qt's image readers
/// read. The header's size is checked before anything is decoded (at most
/// model::kMaxImageSide pixels a side); what the image plugins print while they fail (libpng's
/// own "libpng error" on standard error, Qt's warnings) is kept for the one message instead.
///
///   Result<QImage> image = readImageFile("cat.png");      // or the message naming the file
///   std::vector<std::uint8_t> rgb = rgbBytesOf(*image);  // 8-bit R, G, B, rows top first

#include <QImage>
#include <QString>

#include <cstdint>
#include <vector>

#include "attnlab/base/result.h"

namespace attnlab::ui {

/// The image at `path`, as 8-bit RGB (alpha dropped; grey, 16-bit and CMYK converted as Qt
/// converts them). Errors name the file: not an image, too large, truncated.
Result<QImage> readImageFile(const QString& path);

/// An image's pixels as interleaved 8-bit R, G, B, rows top first (width * height * 3 bytes).
std::vector<std::uint8_t> rgbBytesOf(const QImage& image);

} // namespace attnlab::ui
