// The Patching tab (ui/views/lens_views.h, ui/state/patching_document.h) on the bundled trained
// model, with lesson 17's prompts: its map is the core's activationPatching of the same prompts
// computed here, outside the window (a wiring test: the core is checked against plain PyTorch
// in tests/model/lens_test.cpp); the residual cell of the last layer's output at the last position
// restores the whole clean difference; the result arrives on a worker while the call that asked
// for it has long returned; a cancelled run keeps the previous map; bad input gives one line and
// no map; edits are undone in one step; double-clicking a head opens its attention map.

#include <QComboBox>
#include <QElapsedTimer>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <optional>

#include "attnlab/model/lens.h"
#include "attnlab/model/model.h"
#include "attnlab/tokenizer/tokenizer.h"
#include "cell_texts.h"
#include "status_assert.h"
#include "ui/export/figure_export.h"
#include "ui/state/document.h"
#include "ui/state/model_document.h"
#include "ui/state/patching_document.h"
#include "ui/views/lens_views.h"
#include "ui/window/language.h"
#include "ui/window/main_window.h"

namespace attnlab::ui {
namespace {

const QString kModelDir = QStringLiteral(ATTNLAB_SOURCE_DIR) +
                          QStringLiteral("/resources/models/tiny-llama-induction");
/// Lesson 17: nine words, then eight of them again (the model predicts "dog" after "hat"), and
/// the nine shuffled (it predicts "fox").
const QString kClean =
    QStringLiteral("The fox key mat owl sun red cup hat dog fox key mat owl sun red cup hat");
const QString kCorrupted =
    QStringLiteral("The owl hat fox sun dog cup key red mat fox key mat owl sun red cup hat");

/// The checkpoint loaded here, independently of the window.
struct Reference {
    model::Model model = std::move(model::loadModel(kModelDir.toStdString()).value());
    model::Tokenizer tokenizer =
        std::move(model::Tokenizer::fromFile(kModelDir.toStdString()).value());

    std::vector<std::int64_t> ids(const QString& text) const {
        return tokenizer.encode(text.toStdString()).ids;
    }
    std::int64_t predicted(const std::vector<std::int64_t>& ids) const {
        model::RunOptions options;
        options.logits = model::LogitRows::Last;
        const model::ModelRun run = std::move(model::runModel(model, ids, options).value());
        Index best = 0;
        run.logits.row(run.logits.rows() - 1).maxCoeff(&best);
        return best;
    }
    model::Patching patch(const QString& clean, const QString& corrupted,
                          model::LogitDifference metric, PatchTarget target) const {
        model::PatchingOptions options;
        options.metric = metric;
        options.heads = target == PatchTarget::Heads;
        options.residual = target == PatchTarget::Residual;
        return std::move(
            model::activationPatching(model, ids(clean), ids(corrupted), options).value());
    }
};

double maxAbsDifference(const MatrixD& a, const Eigen::MatrixXd& b) {
    EXPECT_EQ(a.rows(), b.rows());
    EXPECT_EQ(a.cols(), b.cols());
    if (a.rows() != b.rows() || a.cols() != b.cols()) return 1e300;
    return (a - MatrixD(b)).cwiseAbs().maxCoeff();
}

/// The window with the model open on the clean text and the Patching tab in front.
struct PatchingFixture {
    MainWindow window;
    ModelDocument* models = ModelDocument::of(window.document());
    PatchingDocument* patching = PatchingDocument::of(window.document());
    PatchingView* view = nullptr;

    PatchingFixture() {
        window.resize(1280, 720);
        window.show();
        models->openModel(kModelDir);
        EXPECT_TRUE(models->waitForIdle());
        models->setText(kClean);
        EXPECT_TRUE(models->waitForIdle());
        view = qobject_cast<PatchingView*>(window.view(QStringLiteral("patching")));
        EXPECT_NE(view, nullptr);
        window.showView(QStringLiteral("patching"));
        QCoreApplication::processEvents();
    }
    /// Types `text` into the corrupted text field as a person does (one edit per key).
    void typeCorrupted(const QString& text) {
        view->corruptedEdit()->setFocus();
        QTest::keyClicks(view->corruptedEdit(), text);
    }
    void settle() {
        ASSERT_TRUE(patching->waitForIdle());
        QCoreApplication::processEvents();
        view->ensureFresh();
    }
};

// A wiring test: the tab's map is the core's activationPatching of the typed prompts, computed
// here by the same call (checked against plain PyTorch in tests/model/lens_test.cpp). What does
// not come from that call: the metric's tokens are the model's own predictions, the residual
// cell of the last layer at the last position restores the whole clean difference (1), and the
// first position, where the prompts agree, restores nothing (0).
TEST(Patching, WiringTheTabShowsTheCoresPatchingOfTheSamePrompts) {
    const Reference reference;
    PatchingFixture fixture;
    PatchingView* view = fixture.view;
    ASSERT_NE(view, nullptr);
    EXPECT_TRUE(view->notApplicable().isEmpty());
    fixture.typeCorrupted(kCorrupted);
    fixture.settle();
    ASSERT_TRUE(fixture.patching->result().has_value()) << view->message().toStdString();
    EXPECT_TRUE(view->message().isEmpty()) << view->message().toStdString();

    // The metric's defaults: the clean run's prediction ("dog") against the corrupted run's.
    const PatchingResult& result = *fixture.patching->result();
    const std::int64_t dog = reference.predicted(reference.ids(kClean));
    const std::int64_t fox = reference.predicted(reference.ids(kCorrupted));
    EXPECT_EQ(reference.tokenizer.displayToken(dog), " dog");
    EXPECT_EQ(reference.tokenizer.displayToken(fox), " fox");
    EXPECT_EQ(result.metric.a, dog);
    EXPECT_EQ(result.metric.b, fox);

    const model::Patching heads =
        reference.patch(kClean, kCorrupted, {dog, fox}, PatchTarget::Heads);
    EXPECT_LT(maxAbsDifference(view->effects(), heads.heads), 1e-9);
    EXPECT_NEAR(result.patching.clean, heads.clean, 1e-9);
    EXPECT_NEAR(result.patching.corrupted, heads.corrupted, 1e-9);
    EXPECT_EQ(view->data().rows, static_cast<int>(reference.model.config.layers));
    EXPECT_EQ(view->data().cols, static_cast<int>(reference.model.config.heads));

    // The residual stream: (layers + 1) x positions; the last layer's output at the last
    // position is the whole clean state there, so it restores the clean difference exactly.
    const int residualIndex = view->targetBox()->findData(static_cast<int>(PatchTarget::Residual));
    view->targetBox()->setCurrentIndex(residualIndex);
    emit view->targetBox()->activated(residualIndex);
    fixture.settle();
    ASSERT_TRUE(fixture.patching->result().has_value()) << view->message().toStdString();
    const model::Patching residual =
        reference.patch(kClean, kCorrupted, {dog, fox}, PatchTarget::Residual);
    EXPECT_LT(maxAbsDifference(view->effects(), residual.residual), 1e-9);
    const Index layers = reference.model.config.layers;
    const Index last = static_cast<Index>(reference.ids(kClean).size()) - 1;
    ASSERT_EQ(view->effects().rows(), layers + 1);
    EXPECT_NEAR(view->effects()(layers, last), 1.0, 1e-9);
    // Before the first token the prompts differ in, nothing differs to patch.
    EXPECT_EQ(view->effects().col(0).cwiseAbs().maxCoeff(), 0.0);

    // Typed tokens replace the defaults: B = " cup" asks a different question.
    QTest::keyClicks(view->tokenBEdit(), QStringLiteral(" cup"));
    fixture.settle();
    ASSERT_TRUE(fixture.patching->result().has_value()) << view->message().toStdString();
    const std::int64_t cup = reference.tokenizer.encode(" cup", false).ids.at(0);
    EXPECT_EQ(fixture.patching->result()->metric.b, cup);
    EXPECT_LT(maxAbsDifference(
                  view->effects(),
                  reference.patch(kClean, kCorrupted, {dog, cup}, PatchTarget::Residual).residual),
              1e-9);

    // Each field's typing is one undo step: undo the metric, the target, then the text.
    QUndoStack* undo = fixture.window.document()->undoStack();
    undo->undo();
    EXPECT_TRUE(view->tokenBEdit()->text().isEmpty());
    undo->undo();
    EXPECT_EQ(view->targetBox()->currentIndex(),
              view->targetBox()->findData(static_cast<int>(PatchTarget::Heads)));
    fixture.settle();
    EXPECT_LT(maxAbsDifference(view->effects(), heads.heads), 1e-9);
    undo->undo();
    EXPECT_TRUE(view->corruptedEdit()->text().isEmpty());
    undo->redo();
    EXPECT_EQ(view->corruptedEdit()->text(), kCorrupted);
    fixture.settle();

    // Double-clicking a head opens its attention map on the last row.
    view->openHead(1, 2);
    QCoreApplication::processEvents();
    EXPECT_EQ(fixture.window.document()->session().viewState.view, "heatmap");
    EXPECT_EQ(fixture.models->layer(), 1);
    EXPECT_EQ(fixture.models->head(), 2);
    EXPECT_EQ(fixture.window.document()->session().viewState.query, last);
}

TEST(Patching, TheResultArrivesOnAWorkerWithProgress) {
    PatchingFixture fixture;
    PatchingDocument* patching = fixture.patching;
    QSignalSpy finished(patching, &PatchingDocument::finished);
    QSignalSpy progress(patching, &PatchingDocument::progressChanged);
    patching->applyInputs({kCorrupted, {}, {}, PatchTarget::Heads});
    // The request returned with the run still going: the patching is on a worker.
    EXPECT_TRUE(patching->running());
    EXPECT_FALSE(patching->result().has_value());
    EXPECT_TRUE(fixture.view->cancelButton()->isVisibleTo(fixture.view));
    ASSERT_TRUE(finished.wait(120000));
    ASSERT_TRUE(patching->result().has_value()) << patching->message().toStdString();
    EXPECT_FALSE(patching->running());
    EXPECT_FALSE(fixture.view->cancelButton()->isVisibleTo(fixture.view));
    // One report per patched run, the last one "all done".
    const Index runs = patching->result()->patching.runs;
    ASSERT_GE(progress.count(), 2);
    EXPECT_EQ(progress.last().at(0).toLongLong(), runs);
    EXPECT_EQ(progress.last().at(1).toLongLong(), runs);
}

TEST(Patching, ACancelledRunKeepsThePreviousResult) {
    PatchingFixture fixture;
    PatchingDocument* patching = fixture.patching;
    fixture.typeCorrupted(kCorrupted);
    fixture.settle();
    ASSERT_TRUE(patching->result().has_value());
    const MatrixD before = fixture.view->effects();
    ASSERT_EQ(before.rows(), 3);

    // Another request, cancelled before its result is taken: the heads map stays.
    patching->setTarget(PatchTarget::Residual);
    ASSERT_TRUE(patching->running());
    fixture.view->cancelButton()->click();
    fixture.settle();
    ASSERT_TRUE(patching->result().has_value());
    EXPECT_EQ(patching->result()->key.target, PatchTarget::Heads);
    EXPECT_EQ(fixture.view->effects(), before);
    EXPECT_FALSE(fixture.view->message().isEmpty());
    // Not started again by itself; Run starts it.
    fixture.view->refresh();
    EXPECT_FALSE(patching->running());
    patching->rerun();
    fixture.settle();
    ASSERT_TRUE(patching->result().has_value());
    EXPECT_EQ(patching->result()->key.target, PatchTarget::Residual);

    // A new request supersedes the one in flight: only the newest result is shown.
    patching->setTarget(PatchTarget::Heads);
    ASSERT_TRUE(patching->running());
    patching->setMetricTokens(QStringLiteral(" dog"), QStringLiteral(" cup"));
    fixture.settle();
    ASSERT_TRUE(patching->result().has_value());
    EXPECT_EQ(patching->result()->key.target, PatchTarget::Heads);
    EXPECT_TRUE(patching->result()->key.b.has_value());
}

// A whole number names an id, as on the command line and in the Attribution tab
// (model::readToken), even where the tokenizer reads the digits as one token of another id.
TEST(Patching, AWholeNumberNamesAnIdAsEverywhereElse) {
    PatchingFixture fixture;
    PatchingDocument* patching = fixture.patching;
    fixture.typeCorrupted(kCorrupted);
    fixture.settle();
    for (const char* digits : {"5", "7"}) {
        const model::Encoding asText = fixture.models->tokenizer()->encode(digits, false);
        ASSERT_EQ(asText.ids.size(), 1u) << digits;
        ASSERT_NE(std::to_string(asText.ids.front()), digits);
    }
    patching->setMetricTokens(QStringLiteral("5"), QStringLiteral("7"));
    fixture.settle();
    ASSERT_TRUE(patching->result().has_value()) << patching->message().toStdString();
    EXPECT_EQ(patching->result()->key.a, 5);
    EXPECT_EQ(patching->result()->key.b, 7);
}

TEST(Patching, BadInputShowsOneLineAndNoMap) {
    PatchingFixture fixture;
    PatchingDocument* patching = fixture.patching;
    PatchingView* view = fixture.view;
    const auto expectMessage = [&](const char* words) {
        fixture.settle();
        EXPECT_FALSE(patching->result().has_value());
        EXPECT_EQ(view->effects().size(), 0);
        EXPECT_TRUE(view->message().contains(QString::fromLatin1(words)))
            << view->message().toStdString();
        EXPECT_FALSE(view->message().contains(QLatin1Char('\n')));
        EXPECT_FALSE(view->data().unavailable.isEmpty());
    };
    // Nothing typed yet: what to do.
    expectMessage("corrupted text");
    // Prompts of different token lengths.
    fixture.typeCorrupted(QStringLiteral("The owl hat fox"));
    expectMessage("same number of tokens");
    EXPECT_EQ(view->corruptedEdit()->text(), QStringLiteral("The owl hat fox")); // kept
    // A metric token that is several tokens, then one out of the vocabulary.
    patching->applyInputs({kCorrupted, QStringLiteral("dogfoxkey"), {}, PatchTarget::Heads});
    expectMessage("not one");
    patching->applyInputs({kCorrupted, QStringLiteral("99999999"), {}, PatchTarget::Heads});
    expectMessage("vocabulary");
    // The same token twice.
    patching->applyInputs(
        {kCorrupted, QStringLiteral(" dog"), QStringLiteral(" dog"), PatchTarget::Heads});
    expectMessage("same token");
    // The same prompt twice: the metric does not change, nothing to restore.
    patching->applyInputs(
        {kClean, QStringLiteral(" dog"), QStringLiteral(" fox"), PatchTarget::Heads});
    expectMessage("same logit difference");
    // Fixed input: the map comes back.
    patching->applyInputs({kCorrupted, {}, {}, PatchTarget::Heads});
    fixture.settle();
    EXPECT_TRUE(patching->result().has_value());
    EXPECT_TRUE(view->message().isEmpty());
}

// Not a test but a measurement, skipped unless asked for:
//   attnlab_ui_tests --gtest_also_run_disabled_tests --gtest_filter='*PatchEveryHead*'
// prints the wall time from the request to the map on screen for every head of the bundled
// model, and for the residual stream.
TEST(Patching, DISABLED_PatchEveryHeadInTheWindow) {
    PatchingFixture fixture;
    for (PatchTarget target : {PatchTarget::Heads, PatchTarget::Residual}) {
        fixture.patching->applyInputs({});
        fixture.settle();
        QElapsedTimer clock;
        clock.start();
        fixture.patching->applyInputs({kCorrupted, {}, {}, target});
        fixture.settle();
        const double ms = static_cast<double>(clock.nsecsElapsed()) / 1e6;
        ASSERT_TRUE(fixture.patching->result().has_value());
        std::printf("%s: %lld patched runs, %.1f ms on the worker, %.1f ms to the map\n",
                    target == PatchTarget::Heads ? "heads" : "residual",
                    static_cast<long long>(fixture.patching->result()->patching.runs),
                    fixture.patching->result()->milliseconds, ms);
    }
}

// The residual stream of lesson 17 in Chinese on a projector read "0.00.00.01.20.50.12…", the
// last cell clipped (#37, item 1): a number is printed only where it fits its cell.
TEST(Patching, TheResidualGridPrintsANumberOnlyWhereItFits) {
    PatchingFixture fixture;
    PatchingView* view = fixture.view;
    ASSERT_NE(view, nullptr);
    fixture.typeCorrupted(kCorrupted);
    fixture.settle();
    const int residualIndex = view->targetBox()->findData(static_cast<int>(PatchTarget::Residual));
    view->targetBox()->setCurrentIndex(residualIndex);
    emit view->targetBox()->activated(residualIndex);
    fixture.settle();
    ASSERT_TRUE(fixture.patching->result().has_value()) << view->message().toStdString();
    ASSERT_GE(view->effects().cols(), 18);
    view->plot()->replot();
    QCoreApplication::processEvents();
    expectCellTextsInsideTheirCellsAndApart(view->plot());
    // On a wider screen the cells have room: the numbers are printed again, still apart.
    fixture.window.resize(1920, 1080);
    QCoreApplication::processEvents();
    view->plot()->replot();
    QCoreApplication::processEvents();
    EXPECT_GT(expectCellTextsInsideTheirCellsAndApart(view->plot()), 0);
}

// After File > Export Figure… at one column, the Patch tab's title stayed wrapped to the
// figure's width. An export leaves the screen as it was: every widget's geometry, and the
// plot's texts and their rectangles.
TEST(Patching, AnExportLeavesTheTabAsItWas) {
    PatchingFixture fixture;
    PatchingView* view = fixture.view;
    ASSERT_NE(view, nullptr);
    fixture.typeCorrupted(kCorrupted);
    fixture.settle();
    ASSERT_TRUE(fixture.patching->result().has_value()) << view->message().toStdString();
    const auto layOut = [&] {
        for (int pass = 0; pass < 3; ++pass) {
            QCoreApplication::processEvents();
            view->plot()->replot(QCustomPlot::rpImmediateRefresh);
        }
    };
    const auto screen = [&] {
        QStringList shown;
        for (const QWidget* widget : fixture.window.findChildren<QWidget*>())
            if (widget->isVisible())
                shown << QStringLiteral("%1 %2,%3 %4x%5")
                             .arg(QString::fromLatin1(widget->metaObject()->className()))
                             .arg(widget->x())
                             .arg(widget->y())
                             .arg(widget->width())
                             .arg(widget->height());
        for (QCPLayoutElement* element : view->plot()->plotLayout()->elements(true)) {
            if (!element) continue;
            const QRect r = element->outerRect();
            QString line = QStringLiteral("%1 %2,%3 %4x%5")
                               .arg(QString::fromLatin1(element->metaObject()->className()))
                               .arg(r.x())
                               .arg(r.y())
                               .arg(r.width())
                               .arg(r.height());
            if (auto* text = qobject_cast<QCPTextElement*>(element))
                line += QLatin1Char(' ') + text->text();
            shown << line;
        }
        return shown;
    };
    layOut();
    const QStringList before = screen();
    ASSERT_TRUE(before.join(QLatin1Char('\n')).contains(QStringLiteral("Activation patching")));

    const QTemporaryDir dir;
    const std::optional<FigurePreset> column = figurePresetNamed(QStringLiteral("column"));
    ASSERT_TRUE(column.has_value());
    for (const char* file : {"patch.pdf", "patch.png", "patch.svg"}) {
        EXPECT_TRUE(succeeded(
            exportView(*view, dir.filePath(QString::fromLatin1(file)), figureOptionsOf(*column))));
        // What the window does next: the replot the view queued, nothing more.
        QCoreApplication::processEvents();
        const QStringList after = screen();
        EXPECT_EQ(after, before) << file;
        for (qsizetype i = 0; i < std::min(after.size(), before.size()); ++i)
            if (after[i] != before[i]) {
                ADD_FAILURE() << file << ": " << before[i].toStdString() << " became "
                              << after[i].toStdString();
                break;
            }
    }
}

} // namespace
} // namespace attnlab::ui
