#include "ui/views/colormap.h"

#include <qcustomplot.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace attnlab::ui {

namespace {

using Stops = std::array<QRgb, 11>;

// Eleven evenly spaced samples (t = 0, 0.1, ..., 1) of each published map.
constexpr Stops kViridis = {0x440154, 0x482475, 0x414487, 0x355f8d, 0x2a788e, 0x21918c,
                            0x22a884, 0x44bf70, 0x7ad151, 0xbddf26, 0xfde725};
constexpr Stops kMagma = {0x000004, 0x140e36, 0x3b0f70, 0x641a80, 0x8c2981, 0xb73779,
                          0xde4968, 0xf7705c, 0xfe9f6d, 0xfecf92, 0xfcfdbf};
constexpr Stops kCividis = {0x00224e, 0x083370, 0x35456c, 0x4f576c, 0x666970, 0x7d7c78,
                            0x948f78, 0xaea371, 0xc8b866, 0xe5cf52, 0xfee838};
constexpr Stops kGrayscale = {0x000000, 0x1b1b1b, 0x303030, 0x474747, 0x5e5e5e, 0x777777,
                              0x919191, 0xababab, 0xc6c6c6, 0xe2e2e2, 0xffffff};
// ColorBrewer YlGnBu (9 classes, resampled to 11): pale yellow to dark blue, lightness falling
// steadily from L* 99 to 13, so it prints in grey as white-to-black and low weights stay the
// paper's colour.
constexpr Stops kPrint = {0xffffd9, 0xf1f9b9, 0xd6efb3, 0xaadeb7, 0x73c8bd, 0x41b6c4,
                          0x2498c1, 0x2072b2, 0x234da0, 0x1f2f88, 0x081d58};
// ColorBrewer RdBu, reversed so negative is blue and positive red; white at zero.
constexpr Stops kDiverging = {0x053061, 0x2166ac, 0x4393c3, 0x92c5de, 0xd1e5f0, 0xf7f7f7,
                              0xfddbc7, 0xf4a582, 0xd6604d, 0xb2182b, 0x67001f};

const Stops& stopsFor(const QString& name) {
    if (name == QLatin1String("magma")) return kMagma;
    if (name == QLatin1String("cividis")) return kCividis;
    if (name == QLatin1String("grayscale")) return kGrayscale;
    if (name == QLatin1String("print")) return kPrint;
    if (name == QLatin1String("diverging")) return kDiverging;
    return kViridis;
}

} // namespace

QStringList colormapNames() {
    return {QStringLiteral("viridis"),   QStringLiteral("magma"), QStringLiteral("cividis"),
            QStringLiteral("grayscale"), QStringLiteral("print"), QStringLiteral("diverging")};
}

bool isDiverging(const QString& name) {
    return name == QLatin1String("diverging");
}

QColor colormapColor(const QString& name, double t) {
    const Stops& stops = stopsFor(name);
    const double x = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * (stops.size() - 1);
    const auto lower = static_cast<std::size_t>(std::floor(x));
    const std::size_t upper = std::min(lower + 1, stops.size() - 1);
    const double f = x - static_cast<double>(lower);
    const QColor a(stops[lower]);
    const QColor b(stops[upper]);
    return QColor::fromRgbF(static_cast<float>(a.redF() + f * (b.redF() - a.redF())),
                            static_cast<float>(a.greenF() + f * (b.greenF() - a.greenF())),
                            static_cast<float>(a.blueF() + f * (b.blueF() - a.blueF())));
}

QCPColorGradient makeGradient(const QString& name, const QColor& nanColor) {
    QCPColorGradient gradient;
    gradient.clearColorStops();
    const Stops& stops = stopsFor(name);
    for (std::size_t i = 0; i < stops.size(); ++i)
        gradient.setColorStopAt(static_cast<double>(i) / (stops.size() - 1), QColor(stops[i]));
    gradient.setColorInterpolation(QCPColorGradient::ciRGB);
    gradient.setLevelCount(256);
    gradient.setNanHandling(QCPColorGradient::nhNanColor);
    gradient.setNanColor(nanColor);
    return gradient;
}

QColor contrastingText(const QColor& background) {
    // Relative luminance (sRGB approximation); mid-grey switches to black.
    const double luminance =
        0.2126 * background.redF() + 0.7152 * background.greenF() + 0.0722 * background.blueF();
    return luminance > 0.45 ? QColor(Qt::black) : QColor(Qt::white);
}

} // namespace attnlab::ui
