// Figure export: PNG of the requested size x scale and not blank, SVG that parses and keeps
// the token labels as <text>, PDF with a page, CSV/NPY with the data; every view exports.
#include "status_assert.h"
#include "ui/export/figure_export.h"

#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QMenu>
#include <QMenuBar>
#include <QSet>
#include <QTemporaryDir>
#include <QXmlStreamReader>

#include <gtest/gtest.h>

#include <memory>

#include "ui/views/heatmap_view.h"
#include "ui/views/view_registry.h"
#include "ui/window/main_window.h"

namespace attnlab::ui {
namespace {

int distinctColours(const QImage& image) {
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 3)
        for (int x = 0; x < image.width(); x += 3)
            colours.insert(image.pixel(x, y));
    return static_cast<int>(colours.size());
}

struct ExportFixture : ::testing::Test {
    QTemporaryDir directory;
    Document document;
    HeatmapView view{&document};
    void SetUp() override {
        ASSERT_TRUE(directory.isValid());
        document.flush();
        view.resize(500, 400);
    }
    QString path(const char* name) const { return directory.filePath(QLatin1String(name)); }
};

TEST_F(ExportFixture, PngHasTheRequestedSizeTimesScaleAndIsNotBlank) {
    const QString file = path("heatmap.png");
    ASSERT_TRUE(succeeded(exportView(view, file, QSize(400, 300), 2.0)));
    QImage image;
    ASSERT_TRUE(image.load(file));
    EXPECT_EQ(image.size(), QSize(800, 600));
    EXPECT_GT(distinctColours(image), 10);
}

TEST_F(ExportFixture, SvgParsesAndKeepsTokenLabelsAsText) {
    const QString file = path("heatmap.svg");
    ASSERT_TRUE(succeeded(exportView(view, file, QSize(400, 300))));
    QFile svg(file);
    ASSERT_TRUE(svg.open(QIODevice::ReadOnly));
    QXmlStreamReader xml(&svg);
    QStringList texts;
    QString width;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement() && xml.name() == QLatin1String("svg"))
            width = xml.attributes().value(QLatin1String("width")).toString();
        if (xml.isStartElement() && xml.name() == QLatin1String("text"))
            texts << xml.readElementText(QXmlStreamReader::IncludeChildElements).trimmed();
    }
    ASSERT_FALSE(xml.hasError()) << xml.errorString().toStdString();
    EXPECT_TRUE(texts.contains(QStringLiteral("cat"))) << texts.join(',').toStdString();
    EXPECT_TRUE(texts.contains(QStringLiteral("mat")));
    EXPECT_TRUE(width.startsWith(QStringLiteral("400")) || width.startsWith(QStringLiteral("141")))
        << width.toStdString();
}

TEST_F(ExportFixture, PdfStartsWithTheMagicAndHasAPage) {
    const QString file = path("heatmap.pdf");
    ASSERT_TRUE(succeeded(exportView(view, file, QSize(400, 300))));
    QFile pdf(file);
    ASSERT_TRUE(pdf.open(QIODevice::ReadOnly));
    const QByteArray bytes = pdf.readAll();
    EXPECT_TRUE(bytes.startsWith("%PDF"));
    EXPECT_TRUE(bytes.contains("/Type /Page"));
    const int box = bytes.indexOf("/MediaBox");
    ASSERT_GE(box, 0);
    // The page is the figure size in points: "/MediaBox [0 0 400.000000 300.000000]".
    const QStringList box4 = QString::fromLatin1(bytes.mid(box, 60))
                                 .section(QLatin1Char('['), 1)
                                 .section(QLatin1Char(']'), 0, 0)
                                 .split(QLatin1Char(' '), Qt::SkipEmptyParts);
    ASSERT_EQ(box4.size(), 4);
    EXPECT_DOUBLE_EQ(box4[2].toDouble(), 400.0);
    EXPECT_DOUBLE_EQ(box4[3].toDouble(), 300.0);
}

TEST_F(ExportFixture, CsvAndNpyHoldTheWeights) {
    const Experiment& experiment = *document.experiment();
    ASSERT_TRUE(succeeded(exportView(view, path("w.csv"), QSize(400, 300))));
    QFile csv(path("w.csv"));
    ASSERT_TRUE(csv.open(QIODevice::ReadOnly | QIODevice::Text));
    const QStringList lines = QString::fromUtf8(csv.readAll()).split('\n', Qt::SkipEmptyParts);
    ASSERT_EQ(lines.size(), 7); // header + 6 queries
    EXPECT_TRUE(lines[0].contains(QStringLiteral("cat")));
    EXPECT_NEAR(lines[2].split(',')[3].toDouble(), experiment.attention.weights(0, 0, 1, 2), 1e-6);

    ASSERT_TRUE(succeeded(exportView(view, path("w.npy"), QSize(400, 300))));
    const Result<NpyArray> npy = readNpy(path("w.npy").toStdString());
    ASSERT_TRUE(npy.ok()) << npy.error();
    ASSERT_EQ(npy->shape, (std::vector<Index>{6, 6}));
    for (Index i = 0; i < 6; ++i)
        for (Index j = 0; j < 6; ++j)
            EXPECT_FLOAT_EQ(npy->data[static_cast<std::size_t>(i * 6 + j)],
                            experiment.attention.weights(0, 0, i, j));
}

TEST_F(ExportFixture, UnknownExtensionIsAMessage) {
    EXPECT_TRUE(exportView(view, path("figure.bmpx"), QSize(100, 100)));
    EXPECT_FALSE(QFile::exists(path("figure.bmpx")));
}

TEST(FigureExport, EveryViewExportsPngSvgAndPdf) {
    QTemporaryDir directory;
    Document document;
    document.modify(
        [](Session& s) {
            s.heads = 4;
            s.kvHeads = 2;
            s.mask.causal = true;
        },
        QStringLiteral("gqa"));
    document.flush();
    for (const QString& id : viewIds()) {
        std::unique_ptr<View> view(createView(id, &document));
        ASSERT_NE(view, nullptr);
        view->resize(640, 480);
        document.flush();
        const QString base = directory.filePath(id);
        ASSERT_TRUE(succeeded(exportView(*view, base + ".png", QSize(640, 480), 1.5)))
            << id.toStdString();
        QImage image;
        ASSERT_TRUE(image.load(base + ".png"));
        EXPECT_EQ(image.size(), QSize(960, 720));
        EXPECT_GT(distinctColours(image), 4) << id.toStdString();
        ASSERT_TRUE(succeeded(exportView(*view, base + ".svg", QSize(640, 480))));
        ASSERT_TRUE(succeeded(exportView(*view, base + ".pdf", QSize(640, 480))));
        QFile pdf(base + ".pdf");
        ASSERT_TRUE(pdf.open(QIODevice::ReadOnly));
        EXPECT_TRUE(pdf.read(4) == "%PDF");
    }
}

TEST(FigureExport, EveryViewExportsItsDataOrSaysWhyNot) {
    // A lab session with no KV cache and no model: the KV-cache stepper and the model views
    // have nothing to export and say why (the window disables File > Export Data with that
    // reason as its tooltip); the others write their table. Never an empty file.
    QTemporaryDir directory;
    Document document;
    document.flush();
    int exported = 0;
    for (const QString& id : viewIds()) {
        std::unique_ptr<View> view(createView(id, &document));
        ASSERT_NE(view, nullptr);
        view->resize(640, 480);
        document.flush();
        const QString why = dataUnavailable(*view);
        const QString file = directory.filePath(id + QStringLiteral(".csv"));
        const Status error = exportData(*view, file);
        if (why.isEmpty()) {
            EXPECT_TRUE(succeeded(error)) << id.toStdString();
            EXPECT_GT(QFileInfo(file).size(), 0) << id.toStdString();
            ++exported;
        } else {
            ASSERT_TRUE(error) << id.toStdString();
            EXPECT_NE(error->message.find(file.toStdString()), std::string::npos) << error->message;
            EXPECT_FALSE(QFile::exists(file)) << id.toStdString();
        }
        if (id == QLatin1String("heatmap") || id == QLatin1String("entropy") ||
            id == QLatin1String("flash")) {
            EXPECT_TRUE(why.isEmpty()) << id.toStdString() << ": " << why.toStdString();
        }
        if (id == QLatin1String("kv-cache") || id == QLatin1String("next-token")) {
            EXPECT_FALSE(why.isEmpty()) << id.toStdString();
        }
    }
    EXPECT_GE(exported, 8);
}

TEST(FigureExport, TheWindowsExportDataItemIsDisabledWithTheReason) {
    MainWindow window;
    window.resize(1280, 720);
    window.show();
    window.document()->flush();
    QAction* exportData = nullptr;
    QMenu* fileMenu = nullptr;
    for (QAction* top : window.menuBar()->actions())
        if (QMenu* menu = top->menu())
            for (QAction* action : menu->actions())
                if (action->text() == QStringLiteral("Export &Data\u2026")) {
                    exportData = action;
                    fileMenu = menu;
                }
    ASSERT_NE(exportData, nullptr);
    window.showView(QStringLiteral("heatmap"));
    emit fileMenu->aboutToShow();
    EXPECT_TRUE(exportData->isEnabled());
    // The KV-cache stepper of a session without a cache: nothing to export, and why.
    window.showView(QStringLiteral("kv-cache"));
    emit fileMenu->aboutToShow();
    EXPECT_FALSE(exportData->isEnabled());
    EXPECT_NE(exportData->toolTip().indexOf(QStringLiteral("prefill")), -1)
        << exportData->toolTip().toStdString();
    EXPECT_TRUE(fileMenu->toolTipsVisible());
}

} // namespace
} // namespace attnlab::ui
