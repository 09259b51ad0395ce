// Colour maps for print (#13 item 7): every sequential map is perceptually monotonic in
// lightness, so it reads the same in grey as in colour; the diverging map is lightest at zero
// and falls monotonically to either end. CIE L* is computed here from sRGB with the standard
// formulas (IEC 61966-2-1 linearisation, Rec. 709 luminance, CIE 1976 L*), independently of
// the colormap code.
#include "ui/views/colormap.h"

#include <QColor>

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace attnlab::ui {
namespace {

/// CIE 1976 L* (0 black .. 100 white) of an 8-bit sRGB colour, D65 white.
double cieLightness(const QColor& colour) {
    auto linear = [](int channel) {
        const double u = channel / 255.0;
        return u <= 0.04045 ? u / 12.92 : std::pow((u + 0.055) / 1.055, 2.4);
    };
    const double y = 0.2126 * linear(colour.red()) + 0.7152 * linear(colour.green()) +
                     0.0722 * linear(colour.blue());
    const double epsilon = 216.0 / 24389.0;
    const double kappa = 24389.0 / 27.0;
    return y > epsilon ? 116.0 * std::cbrt(y) - 16.0 : kappa * y;
}

/// L* along the map at n + 1 evenly spaced points of [from, to].
std::vector<double> lightnessAlong(const QString& name, double from, double to, int n) {
    std::vector<double> out;
    for (int i = 0; i <= n; ++i)
        out.push_back(cieLightness(colormapColor(name, from + (to - from) * i / n)));
    return out;
}

/// +1 when strictly increasing, -1 when strictly decreasing, 0 otherwise; `step` is the
/// smallest change between neighbours seen.
int direction(const std::vector<double>& values, double* step) {
    bool up = true;
    bool down = true;
    *step = 1e9;
    for (std::size_t i = 1; i < values.size(); ++i) {
        const double d = values[i] - values[i - 1];
        up = up && d > 0;
        down = down && d < 0;
        *step = std::min(*step, std::abs(d));
    }
    return up ? 1 : down ? -1 : 0;
}

TEST(Colormap, KnownLightnessOfReferenceColours) {
    // The reference formula itself: black 0, white 100, sRGB mid-grey 0x777777 about 50.
    EXPECT_NEAR(cieLightness(QColor(0, 0, 0)), 0.0, 1e-9);
    EXPECT_NEAR(cieLightness(QColor(255, 255, 255)), 100.0, 1e-6);
    EXPECT_NEAR(cieLightness(QColor(0x77, 0x77, 0x77)), 50.0, 0.5);
}

TEST(Colormap, EverySequentialMapIsMonotonicInLightness) {
    int sequential = 0;
    for (const QString& name : colormapNames()) {
        if (isDiverging(name)) continue;
        ++sequential;
        double step = 0;
        const int sense = direction(lightnessAlong(name, 0.0, 1.0, 200), &step);
        EXPECT_NE(sense, 0) << name.toStdString() << " is not monotonic in L*";
        // Monotonic and spanning a usable range: at least 60 L* units from end to end.
        const double span = std::abs(cieLightness(colormapColor(name, 1.0)) -
                                     cieLightness(colormapColor(name, 0.0)));
        EXPECT_GT(span, 60.0) << name.toStdString();
    }
    EXPECT_GE(sequential, 5); // viridis, magma, cividis, grayscale, print
}

TEST(Colormap, PrintMapGoesFromPaperToDark) {
    ASSERT_TRUE(colormapNames().contains(QStringLiteral("print")));
    // Low weights stay near the paper's white, high ones print near black.
    EXPECT_GT(cieLightness(colormapColor(QStringLiteral("print"), 0.0)), 95.0);
    EXPECT_LT(cieLightness(colormapColor(QStringLiteral("print"), 1.0)), 20.0);
}

TEST(Colormap, DivergingMapIsLightestAtZeroAndFallsToEitherEnd) {
    int diverging = 0;
    for (const QString& name : colormapNames()) {
        if (!isDiverging(name)) continue;
        ++diverging;
        double step = 0;
        EXPECT_EQ(direction(lightnessAlong(name, 0.0, 0.5, 100), &step), 1) << name.toStdString();
        EXPECT_EQ(direction(lightnessAlong(name, 0.5, 1.0, 100), &step), -1) << name.toStdString();
    }
    EXPECT_GE(diverging, 1); // the difference views need one: the loop above must have run
}

// matplotlib's published endpoints of viridis (_cm_listed.py): #440154 and #fde725.
TEST(Colormap, ViridisEndsAtMatplotlibsColours) {
    const QColor low = colormapColor(QStringLiteral("viridis"), 0.0);
    const QColor high = colormapColor(QStringLiteral("viridis"), 1.0);
    EXPECT_NEAR(low.red(), 0x44, 1);
    EXPECT_NEAR(low.green(), 0x01, 1);
    EXPECT_NEAR(low.blue(), 0x54, 1);
    EXPECT_NEAR(high.red(), 0xfd, 1);
    EXPECT_NEAR(high.green(), 0xe7, 1);
    EXPECT_NEAR(high.blue(), 0x25, 1);
}

} // namespace
} // namespace attnlab::ui
