// MainWindow: every bundled example opens and computes what its file says; a query selected
// anywhere is highlighted in every view; each view comes out on a screenshot.
#include "ui/window/main_window.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QImage>
#include <QJsonDocument>
#include <QJsonObject>
#include <QListWidget>
#include <QPushButton>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QTimer>
#include <qcustomplot.h>

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "ui/views/entropy_view.h"
#include "ui/views/heatmap_view.h"
#include "ui/views/view_registry.h"
#include "ui/window/color_range_dialog.h"
#include "ui/window/inputs_panel.h"

namespace attnlab::ui {
namespace {

/// The words of `text`: what the whitespace tokenizer makes of it, split here by Qt.
std::vector<std::string> words(const QString& text) {
    std::vector<std::string> out;
    for (const QString& word :
         text.split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts))
        out.push_back(word.toStdString());
    return out;
}

// Each example computes what its file says, read here with Qt's own JSON reader: the text's
// and the source's words as the query and key tokens, the file's number of heads, and
// attention weights whose every row sums to 1.
TEST(MainWindow, EveryBundledExampleOpensAndComputesWhatItsFileSays) {
    MainWindow window;
    const QStringList examples = QDir(QStringLiteral(":/examples")).entryList({"*.json"});
    EXPECT_GE(examples.size(), 7);
    for (const QString& name : examples) {
        const std::string where = name.toStdString();
        QFile file(QStringLiteral(":/examples/") + name);
        ASSERT_TRUE(file.open(QIODevice::ReadOnly)) << where;
        const QJsonObject json = QJsonDocument::fromJson(file.readAll()).object();
        const QJsonObject tokens = json.value(QStringLiteral("tokens")).toObject();
        const QString text = tokens.value(QStringLiteral("text")).toString();
        const QString source = tokens.value(QStringLiteral("source")).toString();
        EXPECT_EQ(tokens.value(QStringLiteral("tokenizer")).toString(),
                  QStringLiteral("whitespace"))
            << where; // the words below are the whitespace tokenizer's
        const int heads =
            json.value(QStringLiteral("model")).toObject().value(QStringLiteral("heads")).toInt(1);

        ASSERT_TRUE(window.openExample(QStringLiteral(":/examples/") + name)) << where;
        window.document()->flush();
        EXPECT_TRUE(window.document()->problems().isEmpty())
            << where << ": " << window.document()->problems().join(' ').toStdString();
        const Experiment* experiment = window.document()->experiment();
        ASSERT_NE(experiment, nullptr) << where;
        EXPECT_EQ(experiment->session.text, text.toStdString()) << where;
        EXPECT_EQ(experiment->queryTokens, words(text)) << where;
        EXPECT_EQ(experiment->keyTokens, words(source.isEmpty() ? text : source)) << where;
        const Tensor4& w = experiment->attention.weights;
        ASSERT_EQ(w.heads, heads) << where;
        ASSERT_EQ(w.seq, static_cast<Index>(words(text).size())) << where;
        ASSERT_EQ(w.dim, static_cast<Index>(experiment->keyTokens.size())) << where;
        for (Index h = 0; h < w.heads; ++h)
            for (Index i = 0; i < w.seq; ++i) {
                double sum = 0;
                for (Index j = 0; j < w.dim; ++j) {
                    const double weight = w(0, h, i, j);
                    if (std::isnan(weight)) continue; // a masked key, if drawn as none
                    EXPECT_GE(weight, 0.0) << where << " " << h << "," << i << "," << j;
                    sum += weight;
                }
                EXPECT_NEAR(sum, 1.0, 1e-5) << where << " head " << h << " row " << i;
            }
    }
}

TEST(MainWindow, SelectingAQueryHighlightsItInEveryView) {
    MainWindow window;
    window.resize(1200, 800);
    window.show();
    window.document()->flush();
    // Select through the chips, as a person would.
    QListWidget* chips = window.inputsPanel()->chips();
    ASSERT_GE(chips->count(), 3);
    emit chips->itemClicked(chips->item(2));
    EXPECT_EQ(window.document()->session().viewState.query, 2);
    EXPECT_TRUE(chips->item(2)->isSelected());
    auto* heatmap = qobject_cast<HeatmapView*>(window.view(QStringLiteral("heatmap")));
    ASSERT_NE(heatmap, nullptr);
    heatmap->ensureFresh();
    bool highlighted = false;
    for (int i = 0; i < heatmap->plot()->itemCount(); ++i)
        if (auto* rect = qobject_cast<QCPItemRect*>(heatmap->plot()->item(i)))
            highlighted = highlighted || (rect->visible() && rect->topLeft->coords().y() == 1.5);
    EXPECT_TRUE(highlighted);
    auto* entropy = qobject_cast<EntropyView*>(window.view(QStringLiteral("entropy")));
    ASSERT_NE(entropy, nullptr);
    window.showView(QStringLiteral("entropy"));
    entropy->ensureFresh();
    // The selected bar is drawn apart (accent colour) at x = 2.
    bool selectedBar = false;
    for (int i = 0; i < entropy->plot()->plottableCount(); ++i) {
        auto* bars = qobject_cast<QCPBars*>(entropy->plot()->plottable(i));
        if (bars && bars != entropy->entropyBars() && bars->data()->size() == 1 &&
            bars->data()->at(0)->key == 2.0)
            selectedBar = true;
    }
    EXPECT_TRUE(selectedBar);
}

/// Picks the colour-scale combo's "chosen range…" item as a person would; `answer` then runs
/// on the dialog it opens (from the dialog's own event loop).
void pickChosenRange(MainWindow& window, const std::function<void(ColorRangeDialog&)>& answer) {
    auto* combo = window.findChild<QComboBox*>(QStringLiteral("colorScale"));
    ASSERT_NE(combo, nullptr);
    const int item = combo->findData(QStringLiteral("range"));
    ASSERT_GE(item, 0);
    EXPECT_FALSE(combo->itemData(item, Qt::ToolTipRole).toString().isEmpty());
    bool answered = false;
    QTimer::singleShot(0, &window, [&window, &answer, &answered] {
        auto* dialog = window.findChild<ColorRangeDialog*>();
        if (!dialog) return; // the test fails below: no dialog opened
        answered = true;
        answer(*dialog);
    });
    combo->setCurrentIndex(item);
    emit combo->activated(item);
    EXPECT_TRUE(answered);
}

// Colours > chosen range…: a dialog asks for the range; OK sets the session's scale and range
// (the heatmap colours on it), Cancel leaves the scale and the combo as they were.
TEST(MainWindow, ChosenColourRangeDialogSetsTheRangeAndCancelKeepsTheScale) {
    MainWindow window;
    window.resize(1200, 800);
    window.show();
    window.document()->flush();
    auto* combo = window.findChild<QComboBox*>(QStringLiteral("colorScale"));
    ASSERT_NE(combo, nullptr);
    const int logItem = combo->findData(QStringLiteral("log"));
    combo->setCurrentIndex(logItem);
    emit combo->activated(logItem);
    ASSERT_EQ(window.document()->session().viewState.colorScale, "log");
    const ViewState before = window.document()->session().viewState;

    pickChosenRange(window, [](ColorRangeDialog& dialog) {
        dialog.lowSpin()->setValue(0.002);
        dialog.highSpin()->setValue(0.02);
        dialog.reject();
    });
    EXPECT_EQ(window.document()->session().viewState.colorScale, "log");
    EXPECT_EQ(window.document()->session().viewState.colorLow, before.colorLow);
    EXPECT_EQ(window.document()->session().viewState.colorHigh, before.colorHigh);
    EXPECT_EQ(combo->currentData().toString(), QStringLiteral("log"));

    pickChosenRange(window, [](ColorRangeDialog& dialog) {
        QPushButton* ok = dialog.buttons()->button(QDialogButtonBox::Ok);
        dialog.lowSpin()->setValue(0.02);
        dialog.highSpin()->setValue(0.02);
        EXPECT_FALSE(ok->isEnabled()); // low == high: no range
        dialog.highSpin()->setValue(0.001);
        EXPECT_FALSE(ok->isEnabled());
        dialog.lowSpin()->setValue(0.0005); // typed to the 0.0001
        dialog.highSpin()->setValue(0.0125);
        EXPECT_DOUBLE_EQ(dialog.lowSpin()->value(), 0.0005);
        ASSERT_TRUE(ok->isEnabled());
        ok->click();
    });
    const ViewState& state = window.document()->session().viewState;
    EXPECT_EQ(state.colorScale, "range");
    EXPECT_DOUBLE_EQ(state.colorLow, 0.0005);
    EXPECT_DOUBLE_EQ(state.colorHigh, 0.0125);
    EXPECT_EQ(combo->currentData().toString(), QStringLiteral("range"));
    auto* heatmap = qobject_cast<HeatmapView*>(window.view(QStringLiteral("heatmap")));
    ASSERT_NE(heatmap, nullptr);
    heatmap->ensureFresh();
    EXPECT_EQ(heatmap->colorMap()->dataRange(), QCPRange(0.0005, 0.0125));

    // Picked again, the dialog starts from the range in force.
    pickChosenRange(window, [](ColorRangeDialog& dialog) {
        EXPECT_DOUBLE_EQ(dialog.lowSpin()->value(), 0.0005);
        EXPECT_DOUBLE_EQ(dialog.highSpin()->value(), 0.0125);
        dialog.reject();
    });
    EXPECT_EQ(window.document()->session().viewState.colorScale, "range");
    EXPECT_EQ(combo->currentData().toString(), QStringLiteral("range"));
}

TEST(MainWindow, ScreenshotsOfEveryViewAreNotBlank) {
    // ATTNLAB_SCREENSHOT_DIR keeps the pictures for a person to look at.
    QTemporaryDir temporary;
    const QString directory = qEnvironmentVariableIsSet("ATTNLAB_SCREENSHOT_DIR")
                                  ? qEnvironmentVariable("ATTNLAB_SCREENSHOT_DIR")
                                  : temporary.path();
    MainWindow window;
    window.resize(1500, 950);
    window.show();
    const QString theme = qEnvironmentVariable("ATTNLAB_SCREENSHOT_THEME", QStringLiteral("light"));
    const QString example = qEnvironmentVariable("ATTNLAB_SCREENSHOT_EXAMPLE");
    if (!example.isEmpty()) {
        ASSERT_TRUE(window.openExample(QStringLiteral(":/examples/%1.json").arg(example)));
    }
    window.setTheme(theme, false);
    const QStringList written = window.saveScreenshots(directory);
    EXPECT_EQ(written.size(), viewIds().size());
    for (const QString& path : written) {
        QImage image;
        ASSERT_TRUE(image.load(path));
        QSet<QRgb> colours;
        for (int y = 0; y < image.height(); y += 7)
            for (int x = 0; x < image.width(); x += 7)
                colours.insert(image.pixel(x, y));
        EXPECT_GT(colours.size(), 10) << path.toStdString();
    }
}

} // namespace
} // namespace attnlab::ui
