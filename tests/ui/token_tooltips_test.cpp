// Tokens as people read them, with the raw token on hover (#13 item 4): one helper gives the
// text, and two views that label tokens differently (the entropy view's query axis, the
// aggregate view's matrix) answer a hover over a GPT-2 token's label with the token as shown
// and its raw form with the byte-level marker.

#include <QApplication>
#include <QTemporaryDir>
#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <fstream>

#include "attnlab/io/npy.h"
#include "ui/state/document.h"
#include "ui/state/dump_document.h"
#include "ui/views/aggregate_view.h"
#include "ui/views/entropy_view.h"
#include "ui/views/next_token_view.h"
#include "ui/views/token_tooltips.h"

namespace attnlab::ui {
namespace {

TEST(TokenTooltips, ShowTheTokenAsReadAndItsRawFormAndId) {
    EXPECT_EQ(tokenTooltip("\u0120the", 262),
              QStringLiteral("\u201c the\u201d \u2014 raw token \u201c\u0120the\u201d, id 262"));
    EXPECT_EQ(tokenTooltip("\u2581again"),
              QStringLiteral("\u201c again\u201d \u2014 raw token \u201c\u2581again\u201d"));
    EXPECT_EQ(tokenTooltip("cat"), QStringLiteral("\u201c"
                                                  "cat"
                                                  "\u201d")); // nothing to add
}

/// A 4-token dump whose tokens carry GPT-2's marker, opened in a document.
struct Gpt2Dump {
    QTemporaryDir dir;
    Document document;
    Gpt2Dump() {
        NpyArray array;
        array.shape = {4, 4};
        array.dtype = DType::Float32;
        array.data = {1, 0, 0, 0, 0.5f, 0.5f, 0, 0, 0.2f, 0.3f, 0.5f, 0, 0.1f, 0.2f, 0.3f, 0.4f};
        const QString weights = dir.filePath(QStringLiteral("attn.npy"));
        const QString tokens = dir.filePath(QStringLiteral("tokens.json"));
        EXPECT_FALSE(writeNpy(weights.toStdString(), array, DType::Float32));
        std::ofstream(tokens.toStdString())
            << "[\"Hello\", \"\\u0120world\", \"\\u0120again\", \"!\"]";
        document.flush();
        EXPECT_TRUE(DumpDocument::of(&document)->openAttention(weights, tokens));
        document.flush();
    }
};

/// Lays the view out at a window's size so pixel positions mean something.
void layOut(View& view, QCustomPlot* plot) {
    view.resize(900, 600);
    view.show();
    QApplication::processEvents();
    view.ensureFresh();
    plot->replot(QCustomPlot::rpImmediateRefresh);
}

TEST(TokenTooltips, EntropyQueryLabelGivesTheRawToken) {
    Gpt2Dump dump;
    EntropyView view(&dump.document);
    layOut(view, view.plot());
    QCPAxis* queries = nullptr;
    for (QCPAxisRect* rect : view.plot()->axisRects())
        if (rect->axis(QCPAxis::atBottom)->label() == QLatin1String("query"))
            queries = rect->axis(QCPAxis::atBottom);
    ASSERT_NE(queries, nullptr);
    const QRect inner = queries->axisRect()->rect();
    // Over the tick label of token 1, just under the plot.
    const QPoint onLabel(static_cast<int>(queries->coordToPixel(1)), inner.bottom() + 6);
    const QString text = TokenTooltips::of(view.plot())->textAt(onLabel);
    EXPECT_NE(text.indexOf(QStringLiteral("\u201c world\u201d")), -1) << text.toStdString();
    EXPECT_NE(text.indexOf(QStringLiteral("\u0120world")), -1) << text.toStdString();
    // Over the bar of token 2: the query named, raw form included.
    const QPoint onBar(static_cast<int>(queries->coordToPixel(2)), inner.center().y());
    const QString bar = TokenTooltips::of(view.plot())->textAt(onBar);
    EXPECT_NE(bar.indexOf(QStringLiteral("\u0120again")), -1) << bar.toStdString();
    // Left of every label: nothing.
    EXPECT_TRUE(TokenTooltips::of(view.plot())->textAt(QPoint(1, 1)).isEmpty());
}

TEST(TokenTooltips, AggregateRowLabelGivesTheRawToken) {
    Gpt2Dump dump;
    AggregateView view(&dump.document);
    auto* plot = view.findChild<QCustomPlot*>();
    ASSERT_NE(plot, nullptr);
    layOut(view, plot);
    QCPAxis* rows = plot->axisRect()->axis(QCPAxis::atLeft);
    const QRect inner = rows->axisRect()->rect();
    const QPoint onLabel(inner.left() - 6, static_cast<int>(rows->coordToPixel(1)));
    const QString text = TokenTooltips::of(plot)->textAt(onLabel);
    EXPECT_NE(text.indexOf(QStringLiteral("\u201c world\u201d")), -1) << text.toStdString();
    EXPECT_NE(text.indexOf(QStringLiteral("\u0120world")), -1) << text.toStdString();
    // In the matrix: query and key.
    QCPAxis* columns = plot->axisRect()->axis(QCPAxis::atBottom);
    const QPoint cell(static_cast<int>(columns->coordToPixel(2)),
                      static_cast<int>(rows->coordToPixel(3)));
    const QString both = TokenTooltips::of(plot)->textAt(cell);
    EXPECT_NE(both.indexOf(QStringLiteral("\u0120again")), -1) << both.toStdString();
    EXPECT_NE(both.indexOf(QStringLiteral("!")), -1) << both.toStdString();
}

} // namespace
} // namespace attnlab::ui

namespace attnlab::ui {
namespace {

// The next-token view ranks candidates from 1 at the top: hovering rank 1's label names the
// most likely token as read, its raw byte-level form and its id.
TEST(TokenTooltips, NextTokenLabelGivesTheRawTokenAndId) {
    Document document;
    NextTokenView view(&document);
    NextTokenInput input;
    input.modelName = QStringLiteral("gpt2-shaped");
    input.logits = {0.5f, 3.0f, 1.0f}; // id 1 is the most likely, then 2, then 0
    const std::vector<std::string> vocabulary = {"cat", "\u0120the", "\u0120again"};
    input.tokenText = [&](std::int64_t id) {
        return QString::fromStdString(vocabulary[static_cast<std::size_t>(id)])
            .replace(QChar(0x0120), QLatin1Char(' '));
    };
    input.rawToken = [&](std::int64_t id) { return vocabulary[static_cast<std::size_t>(id)]; };
    view.setInput(input);
    auto* plot = view.findChild<QCustomPlot*>();
    ASSERT_NE(plot, nullptr);
    layOut(view, plot);
    QCPAxis* ranks = plot->yAxis;
    const QRect inner = ranks->axisRect()->rect();
    const auto over = [&](int rank) {
        return TokenTooltips::of(plot)->textAt(
            QPoint(inner.left() - 6, static_cast<int>(ranks->coordToPixel(rank))));
    };
    const QString first = over(1);
    EXPECT_NE(first.indexOf(QStringLiteral("\u0120the")), -1) << first.toStdString();
    EXPECT_NE(first.indexOf(QStringLiteral("id 1")), -1) << first.toStdString();
    const QString second = over(2);
    EXPECT_NE(second.indexOf(QStringLiteral("\u0120again")), -1) << second.toStdString();
    EXPECT_NE(second.indexOf(QStringLiteral("id 2")), -1) << second.toStdString();
}

} // namespace
} // namespace attnlab::ui
