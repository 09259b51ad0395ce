// Model dump views: opening a dump reaches the model view (an L x H grid), clicking a
// thumbnail opens that layer and head in the heatmap, a bad dump leaves a message and the
// previous state, and the aggregate, statistics and difference views draw the dump's numbers.

#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QTest>

#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <fstream>
#include <iterator>
#include <random>

#include "npy_image.h"
#include "ui/export/figure_export.h"
#include "ui/state/document.h"
#include "ui/state/dump_document.h"
#include "ui/views/aggregate_view.h"
#include "ui/views/difference_view.h"
#include "ui/views/head_stats_view.h"
#include "ui/views/heatmap_view.h"
#include "ui/views/model_view.h"
#include "ui/window/main_window.h"

namespace attnlab::ui {
namespace {

constexpr Index kLayers = 3, kHeads = 4, kS = 6;

/// [L, H, S, S] random distributions (each row positive, summing to 1).
NpyArray randomDump(std::uint32_t seed) {
    NpyArray array;
    array.shape = {kLayers, kHeads, kS, kS};
    array.data.resize(static_cast<std::size_t>(kLayers * kHeads * kS * kS));
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> dist(0.05, 1.0);
    for (std::size_t r = 0; r < array.data.size() / kS; ++r) {
        double row[kS], sum = 0;
        for (double& x : row)
            sum += (x = dist(gen));
        for (Index j = 0; j < kS; ++j)
            array.data[r * kS + static_cast<std::size_t>(j)] = static_cast<float>(row[j] / sum);
    }
    return array;
}

float weightAt(const NpyArray& a, Index l, Index h, Index i, Index j) {
    return a.data[static_cast<std::size_t>(((l * kHeads + h) * kS + i) * kS + j)];
}

struct Fixture {
    QTemporaryDir dir;
    NpyArray weights = randomDump(1);
    QString path = dir.filePath(QStringLiteral("model.npz"));
    QString tokens = dir.filePath(QStringLiteral("tokens.txt"));
    Fixture() {
        EXPECT_FALSE(writeNpz(path.toStdString(), {{"attentions", weights}}, DType::Float32));
        std::ofstream(tokens.toStdString()) << "The\ncat\nsat\non\nthe\nmat\n";
    }
};

/// The window at `size`, shown, with the fixture's dump and tokens open in its model view;
/// null when the dump does not open.
ModelView* showDumpInModelView(MainWindow& window, const Fixture& files, QSize size) {
    window.resize(size);
    window.show();
    window.document()->flush();
    if (!DumpDocument::of(window.document())->openAttention(files.path, files.tokens))
        return nullptr;
    window.showView(QStringLiteral("model"));
    auto* model = qobject_cast<ModelView*>(window.view(QStringLiteral("model")));
    if (model) model->ensureFresh();
    return model;
}

TEST(DumpViews, OpeningADumpReachesTheModelViewGrid) {
    Fixture files;
    MainWindow window;
    ModelView* model = showDumpInModelView(window, files, QSize(1200, 800));
    ASSERT_NE(model, nullptr);
    EXPECT_TRUE(DumpDocument::of(window.document())->active());
    EXPECT_EQ(model->layers(), kLayers);
    EXPECT_EQ(model->heads(), kHeads);
    EXPECT_FALSE(model->thumbnail(kLayers - 1, kHeads - 1).isNull());
    EXPECT_EQ(model->thumbnail(0, 0).width(), kS); // one pixel per token below 64
    // The document now shows layer 0 of the dump, with its tokens.
    const Experiment* experiment = window.document()->experiment();
    ASSERT_NE(experiment, nullptr);
    EXPECT_EQ(experiment->headCount(), kHeads);
    EXPECT_EQ(experiment->keyTokens[1], "cat");
    const QImage figure = renderFigure(*model, QSize(600, 400));
    EXPECT_EQ(figure.size(), QSize(600, 400));
}

// At 1280 x 720 the model view left a third of its width empty and named no token: the grid
// fills the view's width, and the first column's rows carry the query tokens and its last
// row's columns the keys.
TEST(DumpViews, TheModelViewFillsItsWidthAndNamesItsTokens) {
    Fixture files;
    MainWindow window;
    ModelView* model = showDumpInModelView(window, files, QSize(1280, 720));
    ASSERT_NE(model, nullptr);
    const QImage figure = renderFigure(*model, model->size()); // paints the view
    ASSERT_FALSE(figure.isNull());
    const QRect last = model->thumbnailRect(kLayers - 1, kHeads - 1);
    EXPECT_GE(last.right(), 0.9 * model->width());
    EXPECT_GE(last.bottom(), 0.6 * model->height());
    const QStringList drawn = model->drawnTokenLabels();
    for (const char* token : {"The", "cat", "sat", "on", "the", "mat"})
        EXPECT_EQ(drawn.count(QString::fromLatin1(token)), 2) << token; // its row, its column
}

TEST(DumpViews, ClickingAThumbnailFocusesThatLayerAndHeadInTheHeatmap) {
    Fixture files;
    MainWindow window;
    window.resize(1200, 800);
    window.show();
    window.document()->flush();
    DumpDocument* dumps = DumpDocument::of(window.document());
    ASSERT_TRUE(dumps->openAttention(files.path));
    window.showView(QStringLiteral("model"));
    auto* model = qobject_cast<ModelView*>(window.view(QStringLiteral("model")));
    model->ensureFresh();
    const QRect target = model->thumbnailRect(2, 3);
    ASSERT_FALSE(target.isEmpty());
    QTest::mouseClick(model, Qt::LeftButton, Qt::NoModifier, target.center());
    EXPECT_EQ(dumps->layer(), 2);
    EXPECT_EQ(window.document()->session().viewState.head, 3);
    ASSERT_NE(window.currentView(), nullptr);
    EXPECT_EQ(window.currentView()->viewId(), QStringLiteral("heatmap"));
    auto* heatmap = qobject_cast<HeatmapView*>(window.view(QStringLiteral("heatmap")));
    const HeatmapData data = heatmap->heatmapData();
    ASSERT_EQ(data.values.rows(), kS);
    for (Index i = 0; i < kS; ++i)
        for (Index j = 0; j < kS; ++j)
            EXPECT_FLOAT_EQ(static_cast<float>(data.values(i, j)),
                            weightAt(files.weights, 2, 3, i, j));
    // No Q/K in an attention dump: the tooltip explains the weight without a q.k line.
    const QString tip = heatmap->explainCell(1, 2);
    EXPECT_TRUE(tip.contains(QStringLiteral("weight"))) << tip.toStdString();
    EXPECT_FALSE(tip.contains(QStringLiteral("q\u00b7k"))) << tip.toStdString();
}

TEST(DumpViews, ABadDumpShowsAMessageAndKeepsThePreviousState) {
    Fixture files;
    MainWindow window;
    window.show();
    window.document()->flush();
    DumpDocument* dumps = DumpDocument::of(window.document());
    ASSERT_TRUE(dumps->openAttention(files.path));
    dumps->setLayer(1);
    const Matrix before =
        Matrix(std::as_const(window.document()->experiment()->attention.weights).head(0, 0));

    const QString bad = files.dir.filePath(QStringLiteral("broken.npz"));
    std::ofstream(bad.toStdString()) << "PK not really an archive";
    EXPECT_FALSE(dumps->openAttention(bad));
    EXPECT_TRUE(window.statusMessage().contains(QStringLiteral("broken.npz")))
        << window.statusMessage().toStdString();
    ASSERT_NE(dumps->dump(), nullptr);
    EXPECT_EQ(dumps->dump()->layers, kLayers);
    EXPECT_EQ(dumps->layer(), 1);
    EXPECT_TRUE(dumps->active());
    const Matrix after =
        Matrix(std::as_const(window.document()->experiment()->attention.weights).head(0, 0));
    EXPECT_TRUE(before.isApprox(after, 0.0f) || before == after);

    // A token count that does not match S is refused the same way.
    const QString shortTokens = files.dir.filePath(QStringLiteral("short.txt"));
    std::ofstream(shortTokens.toStdString()) << "a\nb\n";
    EXPECT_FALSE(dumps->openAttention(files.path, shortTokens));
    EXPECT_TRUE(window.statusMessage().contains(QStringLiteral("short.txt")))
        << window.statusMessage().toStdString();
    EXPECT_EQ(dumps->layer(), 1);
}

using test::npyImage;

/// Files from a stranger that used to exhaust memory or abort the window: each must be one
/// message naming the file, with the dump on screen unchanged.
TEST(DumpViews, LyingArchivesAndBadTokensAreOneMessageAndChangeNothing) {
    Fixture files;
    MainWindow window;
    window.show();
    window.document()->flush();
    DumpDocument* dumps = DumpDocument::of(window.document());
    ASSERT_TRUE(dumps->openAttention(files.path));
    dumps->setLayer(2);
    const Matrix before =
        Matrix(std::as_const(window.document()->experiment()->attention.weights).head(0, 1));

    // 1. A stored member whose sizes claim 3.75 GB (local header and central directory).
    std::string image;
    {
        std::ifstream in(files.path.toStdString(), std::ios::binary);
        image.assign(std::istreambuf_iterator<char>(in), {});
    }
    const std::size_t central = image.find(std::string("PK\x01\x02", 4));
    ASSERT_NE(central, std::string::npos);
    for (std::size_t at : {std::size_t(22), central + 24}) // uncompressed size fields
        for (int b = 0; b < 4; ++b)
            image[at + static_cast<std::size_t>(b)] = static_cast<char>(b == 3 ? 0xf0 : 0);
    const QString lying = files.dir.filePath(QStringLiteral("lying.npz"));
    std::ofstream(lying.toStdString(), std::ios::binary) << image;

    // 2. A tokens member of 10^8 strings of width 0 (3 GB as strings, 0 bytes of data).
    const QString tokens = files.dir.filePath(QStringLiteral("tokens0.npz"));
    ASSERT_FALSE(writeNpzMembers(tokens.toStdString(),
                                 {{"attentions", encodeNpy(files.weights, DType::Float32)},
                                  {"tokens", npyImage("<U0", "(100000000,)", "")}}));

    // 3. A Q/K/V dump whose q claims a shape the bytes do not hold.
    const QString qkv = files.dir.filePath(QStringLiteral("qkv_lying.npz"));
    const std::string v = npyImage("<f4", "(2, 2)", std::string(16, '\0'));
    ASSERT_FALSE(writeNpzMembers(
        qkv.toStdString(),
        {{"q", npyImage("<f4", "(1073741824, 4)", std::string(16, '\0'))}, {"k", v}, {"v", v}}));

    QSignalSpy errors(dumps, &DumpDocument::errorOccurred);
    for (const QString& bad : {lying, tokens, qkv}) {
        errors.clear();
        const bool opened = bad == qkv ? dumps->openQkv(bad) : dumps->openAttention(bad);
        EXPECT_FALSE(opened) << bad.toStdString();
        ASSERT_EQ(errors.count(), 1) << bad.toStdString();
        const QString message = errors.front().front().toString();
        EXPECT_TRUE(message.contains(QFileInfo(bad).fileName())) << message.toStdString();
        EXPECT_FALSE(message.contains(QLatin1Char('\n'))) << message.toStdString();
        ASSERT_NE(dumps->dump(), nullptr);
        EXPECT_EQ(dumps->dump()->source, files.path.toStdString());
        EXPECT_EQ(dumps->layer(), 2);
        EXPECT_TRUE(dumps->active());
        const Matrix after =
            Matrix(std::as_const(window.document()->experiment()->attention.weights).head(0, 1));
        EXPECT_EQ(before, after);
    }
}

TEST(DumpViews, AggregatesStatisticsAndDifferencesDrawTheDump) {
    Fixture files;
    Document document;
    document.flush();
    DumpDocument* dumps = DumpDocument::of(&document);
    ASSERT_TRUE(dumps->openAttention(files.path));
    dumps->focus(1, 2);

    AggregateView aggregate(&document);
    aggregate.resize(600, 400);
    aggregate.ensureFresh();
    MatrixFigure mean = aggregate.figure();
    ASSERT_EQ(mean.values.rows(), kS);
    double expected = 0;
    for (Index h = 0; h < kHeads; ++h)
        expected += weightAt(files.weights, 1, h, 3, 4);
    EXPECT_NEAR(mean.values(3, 4), expected / kHeads, 1e-6);
    aggregate.setKind(AggregateView::Kind::Rollout);
    const MatrixFigure rollout = aggregate.figure();
    ASSERT_EQ(rollout.values.rows(), kS);
    for (Index i = 0; i < kS; ++i)
        EXPECT_NEAR(rollout.values.row(i).sum(), 1.0, 1e-5);

    HeadStatsView stats(&document);
    stats.ensureFresh();
    EXPECT_EQ(stats.model()->rowCount(), kLayers * kHeads);
    stats.model()->sort(2, Qt::DescendingOrder); // by entropy
    for (int r = 1; r < stats.model()->rowCount(); ++r)
        EXPECT_GE(stats.model()->item(r - 1, 2)->data(Qt::DisplayRole).toDouble(),
                  stats.model()->item(r, 2)->data(Qt::DisplayRole).toDouble());

    DifferenceView difference(&document);
    difference.resize(600, 400);
    difference.setComparison(DifferenceView::Mode::Heads, 0, 3);
    difference.ensureFresh();
    const MatrixFigure diff = difference.figure();
    ASSERT_EQ(diff.values.rows(), kS);
    EXPECT_NEAR(diff.values(2, 5),
                weightAt(files.weights, 1, 3, 2, 5) - weightAt(files.weights, 1, 0, 2, 5), 1e-6);

    // Two dumps: the second minus the first at the current layer and head.
    const QString second = files.dir.filePath(QStringLiteral("other.npz"));
    const NpyArray other = randomDump(2);
    ASSERT_FALSE(writeNpz(second.toStdString(), {{"attentions", other}}, DType::Float32));
    ASSERT_TRUE(dumps->openComparison(second));
    difference.setComparison(DifferenceView::Mode::Dumps, 0, 0);
    difference.ensureFresh();
    const MatrixFigure between = difference.figure();
    ASSERT_EQ(between.values.rows(), kS);
    EXPECT_NEAR(between.values(0, 1),
                weightAt(other, 1, 2, 0, 1) - weightAt(files.weights, 1, 2, 0, 1), 1e-6);

    // A session edit goes back to the lab: the document recomputes from the session.
    document.modify([](Session& s) { s.text = "a b c"; }, QStringLiteral("edit"));
    document.flush();
    EXPECT_FALSE(dumps->active());
    ASSERT_NE(document.experiment(), nullptr);
    EXPECT_EQ(document.experiment()->sq(), 3);

    if (const QByteArray out = qgetenv("ATTNLAB_DUMP_FIGURES"); !out.isEmpty()) {
        // Visual check on request: ATTNLAB_DUMP_FIGURES=/some/dir.
        dumps->focus(1, 2);
        aggregate.setKind(AggregateView::Kind::MeanOverHeads);
        aggregate.ensureFresh();
        renderFigure(aggregate, QSize(700, 500)).save(QDir(out).filePath("aggregate.png"));
        stats.ensureFresh();
        renderFigure(stats, QSize(700, 500)).save(QDir(out).filePath("head_stats.png"));
        difference.ensureFresh();
        renderFigure(difference, QSize(700, 500)).save(QDir(out).filePath("difference.png"));
    }
}

// The Dump difference tab left a large empty band above its map, and on a projector squashed
// the map to about 70 px: its controls take the height their rows need and the plot the rest.
TEST(DumpViews, TheDifferencesControlsTakeTheirRowsAndThePlotTheRest) {
    for (const QString& theme : {QStringLiteral("light"), QStringLiteral("projector")}) {
        SCOPED_TRACE(theme.toStdString());
        Fixture files;
        MainWindow window;
        window.setTheme(theme, false);
        window.resize(1280, 720);
        window.show();
        window.document()->flush();
        ASSERT_TRUE(DumpDocument::of(window.document())->openAttention(files.path, files.tokens));
        window.showView(QStringLiteral("dump-difference"));
        auto* view = qobject_cast<DifferenceView*>(window.view(QStringLiteral("dump-difference")));
        ASSERT_NE(view, nullptr);
        view->ensureFresh();
        QCoreApplication::processEvents();
        QWidget* controls = view->layout()->itemAt(0)->widget();
        auto* plot = view->findChild<QCustomPlot*>();
        ASSERT_NE(controls, nullptr);
        ASSERT_NE(plot, nullptr);
        ASSERT_TRUE(controls->hasHeightForWidth());
        const int needed = controls->heightForWidth(controls->width());
        EXPECT_LE(controls->height(), needed + 1)
            << controls->height() << " px for rows of " << needed << " px";
        const int spacing = view->layout()->spacing();
        EXPECT_GE(plot->height(), view->height() - needed - spacing - 1)
            << plot->height() << " of " << view->height() << " px";
        plot->replot(QCustomPlot::rpImmediateRefresh);
        EXPECT_GE(plot->axisRect()->height(), view->height() / 2)
            << plot->axisRect()->height() << " of " << view->height() << " px";
    }
}

/// A Q/K/V dump of 2 layers, 2 query heads and `kvHeads` kv heads of normal values at `path`.
void writeRandomQkv(const QString& path, Index kvHeads, std::uint32_t seed) {
    NpyArray q, k, v;
    q.shape = {2, 2, kS, 4};
    k.shape = v.shape = {2, kvHeads, kS, 4};
    std::mt19937 gen(seed);
    std::normal_distribution<float> normal;
    for (NpyArray* a : {&q, &k, &v}) {
        a->data.resize(static_cast<std::size_t>(a->elementCount()));
        for (float& x : a->data)
            x = normal(gen);
    }
    ASSERT_FALSE(writeNpz(path.toStdString(), {{"q", q}, {"k", k}, {"v", v}}, DType::Float32));
}

TEST(DumpViews, QkvDumpReRunsUnderAnotherMask) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("qkv.npz"));
    writeRandomQkv(path, 1, 3);
    Document document;
    DumpDocument* dumps = DumpDocument::of(&document);
    ASSERT_TRUE(dumps->openQkv(path));
    EXPECT_EQ(dumps->dump()->layers, 2);
    EXPECT_EQ(document.experiment()->kvHeadCount(), 1);
    QkvApply apply;
    apply.spec.mask.causal = true;
    ASSERT_TRUE(dumps->setQkvApply(apply));
    // Causal: everything above the diagonal is exactly zero, in every layer and head.
    for (Index l = 0; l < 2; ++l)
        for (Index h = 0; h < 2; ++h)
            for (Index i = 0; i < kS; ++i)
                for (Index j = i + 1; j < kS; ++j)
                    EXPECT_EQ(dumps->dump()->head(0, l, h)(i, j), 0.0f);
    EXPECT_TRUE(document.experiment()->mask.causal);
    EXPECT_EQ(document.experiment()->source.kind, ExperimentSource::Kind::QkvDump);
}

// A long text's layer is computed on the worker (DumpDocument::setLayer): the layer number
// changes at once, the views keep the previous layer until the new one is handed over, and a
// change meanwhile (another spec) drops the stale result. A wiring test: the weights shown are
// the dump's own maps of that layer.
TEST(DumpViews, ALongLayerIsComputedOnTheWorkerAndAStaleOneIsDropped) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("qkv.npz"));
    writeRandomQkv(path, 2, 5);
    Document document;
    DumpDocument* dumps = DumpDocument::of(&document);
    ASSERT_TRUE(dumps->openQkv(path));
    dumps->setInlineLayerCells(10); // every layer of this dump counts as long
    QSignalSpy pending(dumps, &DumpDocument::layerPendingChanged);

    dumps->setLayer(1);
    EXPECT_EQ(dumps->layer(), 1);
    EXPECT_TRUE(dumps->layerPending());
    EXPECT_EQ(document.experiment()->source.layer, 0); // still the layer shown before
    dumps->waitForLayer();
    EXPECT_FALSE(dumps->layerPending());
    ASSERT_EQ(document.experiment()->source.layer, 1);
    for (Index h = 0; h < 2; ++h)
        EXPECT_EQ(Matrix(document.experiment()->attention.weights.head(0, h)),
                  dumps->dump()->head(0, 1, h));
    ASSERT_EQ(pending.size(), 2);
    EXPECT_TRUE(pending.at(0).at(0).toBool());
    EXPECT_FALSE(pending.at(1).at(0).toBool());

    // Another spec while layer 0 is computed: the spec's own layer stays on screen.
    dumps->setLayer(0);
    QkvApply apply;
    apply.spec.mask.causal = true;
    ASSERT_TRUE(dumps->setQkvApply(apply));
    dumps->waitForLayer();
    EXPECT_EQ(document.experiment()->source.layer, 0);
    EXPECT_TRUE(document.experiment()->mask.causal);
    for (Index i = 0; i < kS; ++i)
        for (Index j = i + 1; j < kS; ++j)
            EXPECT_EQ(document.experiment()->attention.weights(0, 0, i, j), 0.0f);
}

} // namespace
} // namespace attnlab::ui
