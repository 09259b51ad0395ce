#include "image_file.h"

#ifdef ATTNLAB_HAS_UI
#include <QString>

#include "ui/state/image_file.h"
#endif

namespace attnlab::app {

Result<RgbImage> readRgbImage(const std::string& path) {
#ifdef ATTNLAB_HAS_UI
    Result<QImage> image = ui::readImageFile(QString::fromStdString(path));
    if (!image) return Error{image.error()};
    RgbImage out;
    out.width = image->width();
    out.height = image->height();
    out.rgb = ui::rgbBytesOf(*image);
    return out;
#else
    return Error{path + ": this attnlab was built without Qt (ATTNLAB_BUILD_UI=OFF), whose "
                        "image readers read PNG and JPEG"};
#endif
}

} // namespace attnlab::app
