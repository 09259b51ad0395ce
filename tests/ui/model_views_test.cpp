// The next-token and head-roles views: alone on plain data (the append button emits the
// chosen id, the controls reshape the distribution, the table sorts, a tick asks for exactly
// the ablation it shows), then bound to a ModelDocument on the bundled trained model (append
// grows the ids, a ticked head re-runs the model with one undo step, the probe finds the
// induction head on a worker thread and equals `attnlab model --roles --probe`, and stops when
// cancelled). The RoPE view rotates with the frequencies of a model's rope_scaling.

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QUndoStack>

#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <cmath>
#include <map>
#include <memory>
#include <numbers>

#include "status_assert.h"
#include "ui/export/figure_export.h"
#include "ui/state/document.h"
#include "ui/state/model_document.h"
#include "ui/views/head_roles_view.h"
#include "ui/views/model_views_binding.h"
#include "ui/views/next_token_view.h"
#include "ui/views/rope_view.h"
#include "ui/views/view_registry.h"

namespace attnlab::ui {
namespace {

const QString kDemoModel =
    QStringLiteral(ATTNLAB_SOURCE_DIR "/resources/models/tiny-llama-induction");

/// Logits ln 1, ln 2, ..., ln n: token i has probability (i + 1) / (n (n + 1) / 2).
NextTokenInput countingInput(int n) {
    NextTokenInput input;
    input.modelName = QStringLiteral("counting");
    for (int i = 1; i <= n; ++i)
        input.logits.push_back(std::log(static_cast<float>(i)));
    input.tokenText = [](std::int64_t id) { return QStringLiteral("tok%1").arg(id); };
    input.context = QStringLiteral("one two");
    return input;
}

TEST(NextTokenView, AppendEmitsTheChosenTokensId) {
    Document document;
    NextTokenView view(&document);
    view.resize(900, 600);
    view.setInput(countingInput(6));
    view.ensureFresh();
    ASSERT_EQ(view.distribution().size(), 6u); // top-k 10 keeps all six
    EXPECT_EQ(view.selectedId(), 5);           // the most likely is chosen first
    EXPECT_NEAR(view.distribution()[0].probability, 6.0 / 21, 1e-6);
    QSignalSpy spy(&view, &NextTokenView::appendRequested);
    view.appendButton()->click();
    ASSERT_EQ(spy.count(), 1);
    EXPECT_EQ(spy.at(0).at(0).toLongLong(), 5);
    view.setSelectedRank(2);
    view.appendSelected();
    ASSERT_EQ(spy.count(), 2);
    EXPECT_EQ(spy.at(1).at(0).toLongLong(), 3);
    // A draw near 1 picks the least likely kept token.
    view.sampleWith(0.999);
    EXPECT_EQ(view.selectedId(), 0);
}

TEST(NextTokenView, ControlsReshapeTheDistribution) {
    Document document;
    NextTokenView view(&document);
    view.setInput(countingInput(6));
    view.topKBox()->setValue(2);
    ASSERT_EQ(view.distribution().size(), 2u);
    EXPECT_NEAR(view.distribution()[0].probability, 6.0 / 11, 1e-6);
    EXPECT_EQ(view.sampling().topK, 2);
    view.topKBox()->setValue(0); // off
    view.topPBox()->setValue(0.5);
    // 6/21 + 5/21 = 0.52 >= 0.5: two tokens.
    EXPECT_EQ(view.distribution().size(), 2u);
    view.temperatureBox()->setValue(0);
    ASSERT_EQ(view.distribution().size(), 1u);
    EXPECT_EQ(view.distribution()[0].probability, 1.0);
    const DataTable table = view.data();
    EXPECT_EQ(table.rows, 1);
    EXPECT_EQ(table.rowLabels.value(0), QStringLiteral("tok5"));
}

TEST(NextTokenView, SaysSoWhenNoModelIsLoadedAndDrawsAFigure) {
    Document document;
    NextTokenView view(&document);
    view.ensureFresh();
    EXPECT_TRUE(view.placeholderText().contains(QStringLiteral("Open Model")));
    EXPECT_FALSE(view.appendButton()->isEnabled());
    QSignalSpy spy(&view, &NextTokenView::appendRequested);
    view.appendSelected();
    EXPECT_EQ(spy.count(), 0);

    view.setInput(countingInput(30));
    view.ensureFresh();
    EXPECT_TRUE(view.placeholderText().isEmpty());
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("next.png"));
    ASSERT_TRUE(succeeded(exportView(view, path, QSize(640, 400))));
    const QImage image(path);
    ASSERT_EQ(image.size(), QSize(640, 400));
    int colours = 0;
    QRgb first = image.pixel(0, 0);
    for (int y = 0; y < image.height(); y += 7)
        for (int x = 0; x < image.width(); x += 7)
            colours += image.pixel(x, y) != first;
    EXPECT_GT(colours, 100);
}

TEST(NextTokenView, DrawsTheProbabilitiesWithEveryHeadOnBesideAnAblatedRun) {
    Document document;
    NextTokenView view(&document);
    NextTokenInput input = countingInput(4); // 0.1 0.2 0.3 0.4
    input.ablatedHeads = 2;
    // With every head on: logits ln 4, ln 3, ln 2, ln 1 + 5 (shifted: only differences count)
    // are probabilities 0.4, 0.3, 0.2, 0.1, the reverse of the ablated run's.
    for (int i = 4; i >= 1; --i)
        input.baselineLogits.push_back(std::log(static_cast<float>(i)) + 5.0f);
    view.setInput(input);
    view.ensureFresh();
    ASSERT_EQ(view.baselineProbabilities().size(), 4u);
    // The view lists the ablated run's kept tokens, most likely first: ids 3, 2, 1, 0.
    const double expected[] = {0.1, 0.2, 0.3, 0.4};
    for (std::size_t r = 0; r < 4; ++r) {
        EXPECT_EQ(view.distribution()[r].id, static_cast<std::int64_t>(3 - r));
        EXPECT_NEAR(view.baselineProbabilities()[r], expected[r], 1e-6);
    }
    EXPECT_EQ(view.data().cols, 4);
    input.baselineLogits = {1, 2}; // a different vocabulary: not comparable, not drawn
    view.setInput(input);
    EXPECT_TRUE(view.baselineProbabilities().empty());
}

// The markers (the model's own probability, the run with every head on) overlapped the
// percentages: each percentage starts right of every marker of its row, in every theme.
TEST(NextTokenView, PercentagesStartPastTheMarkers) {
    for (const char* theme : {"light", "projector"}) {
        SCOPED_TRACE(theme);
        Document document;
        document.setTheme(QString::fromLatin1(theme));
        NextTokenView view(&document);
        NextTokenInput input = countingInput(4);
        input.ablatedHeads = 1;
        for (int i = 4; i >= 1; --i)
            input.baselineLogits.push_back(std::log(static_cast<float>(i)));
        view.setInput(input);
        view.resize(900, 500);
        view.show();
        view.ensureFresh();
        QCustomPlot* plot = view.findChild<QCustomPlot*>();
        ASSERT_NE(plot, nullptr);
        plot->replot(QCustomPlot::rpImmediateRefresh);
        QCPAxis* x = plot->xAxis;
        QCPAxis* y = plot->yAxis;
        // Every marker's right edge in its row (pixel y of the row -> farthest right pixel).
        std::map<int, double> markerEdge;
        int markers = 0;
        for (int g = 0; g < plot->graphCount(); ++g) {
            QCPGraph* graph = plot->graph(g);
            const QCPScatterStyle style = graph->scatterStyle();
            if (style.isNone() || !graph->visible()) continue;
            for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) {
                const int row = static_cast<int>(std::lround(y->coordToPixel(it->key)));
                const double edge =
                    x->coordToPixel(it->value) + style.size() / 2 + style.pen().widthF() / 2;
                markerEdge[row] = std::max(markerEdge[row], edge);
                ++markers;
            }
        }
        ASSERT_EQ(markers, 8); // the model's and the baseline's, four rows each
        int labels = 0;
        for (int i = 0; i < plot->itemCount(); ++i) {
            auto* text = qobject_cast<QCPItemText*>(plot->item(i));
            if (!text || !text->text().endsWith(QLatin1Char('%'))) continue;
            const QPointF at = text->position->pixelPosition();
            const int row = static_cast<int>(std::lround(at.y()));
            ASSERT_TRUE(markerEdge.count(row)) << text->text().toStdString();
            EXPECT_GE(at.x() + text->padding().left(), markerEdge[row] + 1)
                << text->text().toStdString();
            ++labels;
        }
        EXPECT_EQ(labels, 4);
    }
}

std::vector<model::HeadRole> handRoles() {
    std::vector<model::HeadRole> roles;
    for (Index layer = 0; layer < 2; ++layer)
        for (Index head = 0; head < 2; ++head) {
            model::HeadRole role;
            role.layer = layer;
            role.head = head;
            role.queries = 9;
            role.previousToken = layer == 0 && head == 1 ? 0.9 : 0.1;
            role.induction = layer == 1 ? 0.3 + 0.4 * double(head) : 0.05;
            role.inductionQueries = 4;
            role.meanDistance = double(layer + head);
            roles.push_back(role);
        }
    return roles;
}

HeadRolesInput handInput() {
    HeadRolesInput input;
    input.modelName = QStringLiteral("hand");
    input.layers = 2;
    input.heads = 2;
    input.roles = handRoles();
    input.tokens = 10;
    input.ablated = {{0, 0}};
    return input;
}

std::pair<Index, Index> rowHead(const HeadRolesView& view, int row) {
    return {view.model()->item(row, HeadRolesView::Layer)->text().toLongLong(),
            view.model()->item(row, HeadRolesView::Head)->text().toLongLong()};
}

TEST(HeadRolesView, SortsAndReportsWhatThePersonAsksFor) {
    Document document;
    HeadRolesView view(&document);
    view.setInput(handInput());
    view.ensureFresh();
    ASSERT_EQ(view.model()->rowCount(), 4);
    view.table()->sortByColumn(HeadRolesView::PreviousToken, Qt::DescendingOrder);
    EXPECT_EQ(rowHead(view, 0), std::make_pair(Index(0), Index(1)));
    view.table()->sortByColumn(HeadRolesView::Induction, Qt::DescendingOrder);
    EXPECT_EQ(rowHead(view, 0), std::make_pair(Index(1), Index(1)));
    EXPECT_EQ(rowHead(view, 1), std::make_pair(Index(1), Index(0)));
    EXPECT_TRUE(view.summaryText().contains(QStringLiteral("L1 H1")));

    // The ablated head is ticked; ticking another asks for both.
    QSignalSpy ablation(&view, &HeadRolesView::ablationRequested);
    int row00 = -1, row11 = -1;
    for (int r = 0; r < 4; ++r) {
        if (rowHead(view, r) == std::make_pair(Index(0), Index(0))) row00 = r;
        if (rowHead(view, r) == std::make_pair(Index(1), Index(1))) row11 = r;
    }
    EXPECT_EQ(view.model()->item(row00, HeadRolesView::Ablate)->checkState(), Qt::Checked);
    view.model()->item(row11, HeadRolesView::Ablate)->setCheckState(Qt::Checked);
    ASSERT_EQ(ablation.count(), 1);
    const auto asked = ablation.at(0).at(0).value<std::set<std::pair<Index, Index>>>();
    EXPECT_EQ(asked, (std::set<std::pair<Index, Index>>{{0, 0}, {1, 1}}));

    QSignalSpy focus(&view, &HeadRolesView::focusRequested);
    emit view.table()->doubleClicked(view.model()->index(row11, HeadRolesView::Induction));
    ASSERT_EQ(focus.count(), 1);
    EXPECT_EQ(focus.at(0).at(0).toLongLong(), 1);
    EXPECT_EQ(focus.at(0).at(1).toLongLong(), 1);

    QSignalSpy probe(&view, &HeadRolesView::probeRequested);
    view.probeLengthBox()->setValue(20);
    view.seedBox()->setValue(3);
    view.probeButton()->click();
    ASSERT_EQ(probe.count(), 1);
    EXPECT_EQ(probe.at(0).at(0).toLongLong(), 20);
    EXPECT_EQ(probe.at(0).at(1).toULongLong(), 3u);
}

TEST(HeadRolesView, ShowsTheProbeRankedByInductionAndADashWithoutRepeats) {
    Document document;
    HeadRolesView view(&document);
    HeadRolesInput input = handInput();
    for (auto& role : input.roles)
        role.inductionQueries = 0; // the text repeats no token
    view.setInput(input);
    view.ensureFresh();
    EXPECT_EQ(view.model()->item(0, HeadRolesView::Induction)->text(), QStringLiteral("\u2014"));
    EXPECT_TRUE(std::isnan(view.data().at(0, HeadRolesView::Induction - 1)));

    HeadRolesProbe probe;
    probe.roles = handRoles();
    probe.roles[0].induction = 0.95; // L0 H0 best on the probe
    probe.length = 8;
    view.setProbeResult(probe);
    view.ensureFresh();
    EXPECT_TRUE(view.showingProbe());
    EXPECT_EQ(rowHead(view, 0), std::make_pair(Index(0), Index(0)));
    EXPECT_TRUE(view.summaryText().contains(QStringLiteral("probe")));
    view.showText();
    view.ensureFresh();
    EXPECT_FALSE(view.showingProbe());
}

TEST(HeadRolesView, SaysSoWhenNoModelIsLoaded) {
    Document document;
    HeadRolesView view(&document);
    view.ensureFresh();
    EXPECT_TRUE(view.placeholderText().contains(QStringLiteral("Open Model")));
    EXPECT_FALSE(view.probeButton()->isEnabled());
}

/// Lets the event loop run until the view's probe (on a worker) has come back; false after a
/// minute.
bool waitForProbe(const HeadRolesView& view) {
    QElapsedTimer clock;
    clock.start();
    while (view.probeRunning()) {
        if (clock.elapsed() > 60000) return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    }
    return true;
}

/// `attnlab model --model DIR --roles --json ARGS...` run by the built binary: (layer, head) to
/// its JSON entry.
std::map<std::pair<int, int>, QJsonObject> commandRoles(const QStringList& args) {
    QProcess process;
    process.start(QStringLiteral(ATTNLAB_BINARY),
                  QStringList{QStringLiteral("model"), QStringLiteral("--model"), kDemoModel,
                              QStringLiteral("--roles"), QStringLiteral("--json")} +
                      args);
    std::map<std::pair<int, int>, QJsonObject> heads;
    if (!process.waitForFinished(120000) || process.exitCode() != 0) {
        ADD_FAILURE() << "attnlab model failed: " << process.readAllStandardError().toStdString();
        return heads;
    }
    const QJsonObject report = QJsonDocument::fromJson(process.readAllStandardOutput()).object();
    for (const QJsonValue& head :
         report[QStringLiteral("roles")][QStringLiteral("heads")].toArray()) {
        const QJsonObject entry = head.toObject();
        heads[{entry[QStringLiteral("layer")].toInt(), entry[QStringLiteral("head")].toInt()}] =
            entry;
    }
    return heads;
}

/// The probe's roles equal the command's, head by head.
void expectSameRoles(const std::vector<model::HeadRole>& roles,
                     const std::map<std::pair<int, int>, QJsonObject>& command) {
    ASSERT_EQ(roles.size(), command.size());
    constexpr double kTolerance = 1e-5; // float32 forwards, maybe split over other threads
    for (const model::HeadRole& role : roles) {
        const auto found =
            command.find({static_cast<int>(role.layer), static_cast<int>(role.head)});
        ASSERT_NE(found, command.end()) << role.layer << ":" << role.head;
        const QJsonObject& entry = found->second;
        EXPECT_NEAR(role.previousToken, entry[QStringLiteral("previous_token")].toDouble(),
                    kTolerance);
        EXPECT_EQ(role.inductionQueries, entry[QStringLiteral("induction_queries")].toInt());
        if (role.inductionQueries > 0) {
            EXPECT_NEAR(role.induction, entry[QStringLiteral("induction")].toDouble(), kTolerance);
        }
        EXPECT_NEAR(role.firstToken, entry[QStringLiteral("first_token")].toDouble(), kTolerance);
        EXPECT_NEAR(role.self, entry[QStringLiteral("self")].toDouble(), kTolerance);
        EXPECT_NEAR(role.meanDistance, entry[QStringLiteral("mean_distance")].toDouble(),
                    kTolerance * 10);
    }
}

class BoundViews : public ::testing::Test {
protected:
    void SetUp() override {
        m_models = ModelDocument::of(&m_document);
        ASSERT_TRUE(m_models->openModelNow(kDemoModel));
        m_models->setText(QStringLiteral("the cat sat on the mat and the dog"));
        ASSERT_TRUE(m_models->waitForIdle());
        m_next.reset(
            static_cast<NextTokenView*>(createView(QStringLiteral("next-token"), &m_document)));
        m_roles.reset(
            static_cast<HeadRolesView*>(createView(QStringLiteral("head-roles"), &m_document)));
        ASSERT_TRUE(m_next && m_roles);
        m_next->ensureFresh();
        m_roles->ensureFresh();
    }
    /// The argmax of the model's own last logits.
    std::int64_t modelArgmax() const {
        const Matrix& logits = m_models->run()->logits;
        Index best = 0;
        logits.row(logits.rows() - 1).maxCoeff(&best);
        return best;
    }
    Document m_document;
    ModelDocument* m_models = nullptr;
    std::unique_ptr<NextTokenView> m_next;
    std::unique_ptr<HeadRolesView> m_roles;
};

TEST_F(BoundViews, AppendGrowsTheIdsByTheChosenToken) {
    ASSERT_FALSE(m_next->distribution().empty());
    EXPECT_EQ(m_next->selectedId(), modelArgmax());
    const auto before = m_models->ids();
    const std::int64_t chosen = m_next->selectedId();
    m_next->appendButton()->click();
    ASSERT_TRUE(m_models->waitForIdle());
    ASSERT_EQ(m_models->ids().size(), before.size() + 1);
    EXPECT_EQ(m_models->ids().back(), chosen);
    EXPECT_EQ(m_models->run()->ids, m_models->ids());
    // The view follows the new run.
    EXPECT_EQ(m_next->selectedId(), modelArgmax());
}

TEST_F(BoundViews, TickingAHeadAblatesItWithOneUndoStep) {
    const double before = m_next->distribution().front().modelProbability;
    const std::int64_t topBefore = m_next->distribution().front().id;
    EXPECT_TRUE(m_next->baselineProbabilities().empty()); // every head is on
    // The roles are measured when the view is drawn (here: as export draws it).
    m_roles->ensureFresh();
    EXPECT_EQ(m_roles->model()->rowCount(), 0);
    EXPECT_EQ(m_roles->placeholderText(), HeadRolesView::tr("Measuring every head on the text\u2026"));
    m_roles->ensureComplete();
    ASSERT_EQ(m_roles->model()->rowCount(), 12);
    int row = -1;
    for (int r = 0; r < 12; ++r)
        if (rowHead(*m_roles, r) == std::make_pair(Index(1), Index(1))) row = r;
    ASSERT_GE(row, 0);
    const int undoSteps = m_document.undoStack()->count();
    m_roles->model()->item(row, HeadRolesView::Ablate)->setCheckState(Qt::Checked);
    ASSERT_TRUE(m_models->waitForIdle());
    EXPECT_EQ(m_models->ablatedHeads(), (HeadSet{{1, 1}}));
    EXPECT_EQ(m_document.undoStack()->count(), undoSteps + 1);
    EXPECT_EQ(m_models->run()->ablatedHeads, (HeadSet{{1, 1}}));
    m_next->ensureFresh();
    EXPECT_NE(m_next->distribution().front().modelProbability, before);
    // The run with every head on is drawn beside it: the same ids' unablated probabilities.
    ASSERT_EQ(m_next->baselineProbabilities().size(), m_next->distribution().size());
    EXPECT_EQ(m_next->input().ablatedHeads, 1);
    bool found = false;
    for (std::size_t r = 0; r < m_next->distribution().size(); ++r)
        if (m_next->distribution()[r].id == topBefore) {
            EXPECT_NEAR(m_next->baselineProbabilities()[r], before, 1e-9);
            found = true;
        }
    EXPECT_TRUE(found) << "the unablated top token is among the kept ones";
    m_document.undoStack()->undo();
    ASSERT_TRUE(m_models->waitForIdle());
    EXPECT_TRUE(m_models->ablatedHeads().empty());
    EXPECT_NEAR(m_next->distribution().front().modelProbability, before, 1e-6);
}

TEST_F(BoundViews, TheProbeRanksTheInductionHeadFirst) {
    m_roles->probeLengthBox()->setValue(32);
    m_roles->probeButton()->click();
    ASSERT_TRUE(waitForProbe(*m_roles));
    ASSERT_TRUE(m_roles->showingProbe());
    m_roles->ensureFresh();
    const double top = m_roles->model()->item(0, HeadRolesView::Induction)->text().toDouble();
    EXPECT_GE(top, 0.4);
    EXPECT_GT(rowHead(*m_roles, 0).first, 0); // induction needs an earlier layer to feed it
}

// The probe runs on a worker: the button turns into Cancel at once, the window keeps
// processing events, and the result that arrives is what `attnlab model --roles --probe N
// --seed S` measures; with a head switched off, the probe on screen is measured again with it
// off and equals the command's --ablate.
TEST_F(BoundViews, TheProbeRunsOnAWorkerAndEqualsTheCommand) {
    const QString runText = m_roles->probeButton()->text();
    m_roles->probeLengthBox()->setValue(20);
    m_roles->seedBox()->setValue(5);
    m_roles->probeButton()->click();
    EXPECT_TRUE(m_roles->probeRunning()); // the click returned before the probe finished
    EXPECT_NE(m_roles->probeButton()->text(), runText);
    EXPECT_FALSE(m_roles->probeLengthBox()->isEnabled());
    ASSERT_TRUE(waitForProbe(*m_roles));
    EXPECT_EQ(m_roles->probeButton()->text(), runText);
    EXPECT_TRUE(m_roles->probeLengthBox()->isEnabled());
    ASSERT_TRUE(m_roles->showingProbe());
    EXPECT_EQ(m_roles->probe()->length, 20);
    EXPECT_EQ(m_roles->probe()->seed, 5u);
    EXPECT_TRUE(m_roles->probe()->ablated.empty());
    expectSameRoles(m_roles->probe()->roles,
                    commandRoles({QStringLiteral("--probe"), QStringLiteral("20"),
                                  QStringLiteral("--seed"), QStringLiteral("5")}));

    m_models->setAblatedHeads({{1, 1}});
    ASSERT_TRUE(m_models->waitForIdle());
    ASSERT_TRUE(waitForProbe(*m_roles));
    ASSERT_TRUE(m_roles->showingProbe());
    EXPECT_EQ(m_roles->probe()->ablated, (HeadSet{{1, 1}}));
    expectSameRoles(
        m_roles->probe()->roles,
        commandRoles({QStringLiteral("--probe"), QStringLiteral("20"), QStringLiteral("--seed"),
                      QStringLiteral("5"), QStringLiteral("--ablate"), QStringLiteral("1:1")}));
}

// A second click while the probe runs cancels it: nothing is shown, no error, and the button
// runs the probe again afterwards.
TEST_F(BoundViews, CancellingTheProbeShowsNothing) {
    int errors = 0;
    QObject::connect(&m_document, &Document::errorOccurred, [&errors] { ++errors; });
    m_roles->probeLengthBox()->setValue(32);
    m_roles->probeButton()->click();
    ASSERT_TRUE(m_roles->probeRunning());
    m_roles->probeButton()->click(); // Cancel
    ASSERT_TRUE(waitForProbe(*m_roles));
    EXPECT_FALSE(m_roles->showingProbe());
    EXPECT_EQ(errors, 0);
    m_roles->probeButton()->click();
    ASSERT_TRUE(waitForProbe(*m_roles));
    EXPECT_TRUE(m_roles->showingProbe());
}

// A model whose config.json has llama3 rope_scaling: the RoPE view's theta_t are the ones the
// forward rotates with. Independently (Llama 3.1's rule): a pair whose wavelength 2 pi / f is
// under original / high_freq_factor keeps f, one over original / low_freq_factor gets f / factor,
// and the ones between lie between those two.
TEST(RopeViewOfAModel, UsesTheFrequenciesOfItsRopeScaling) {
    QTemporaryDir folder;
    ASSERT_TRUE(folder.isValid());
    for (const char* name : {"model.safetensors", "tokenizer.json"})
        ASSERT_TRUE(QFile::copy(kDemoModel + QLatin1Char('/') + QLatin1String(name),
                                folder.filePath(QLatin1String(name))));
    QFile original(kDemoModel + QStringLiteral("/config.json"));
    ASSERT_TRUE(original.open(QIODevice::ReadOnly));
    QJsonObject config = QJsonDocument::fromJson(original.readAll()).object();
    constexpr double kFactor = 8, kLow = 1, kHigh = 4, kOriginal = 64;
    config[QStringLiteral("rope_scaling")] =
        QJsonObject{{QStringLiteral("rope_type"), QStringLiteral("llama3")},
                    {QStringLiteral("factor"), kFactor},
                    {QStringLiteral("low_freq_factor"), kLow},
                    {QStringLiteral("high_freq_factor"), kHigh},
                    {QStringLiteral("original_max_position_embeddings"), kOriginal}};
    QFile scaled(folder.filePath(QStringLiteral("config.json")));
    ASSERT_TRUE(scaled.open(QIODevice::WriteOnly));
    scaled.write(QJsonDocument(config).toJson());
    scaled.close();

    Document document;
    ModelDocument* models = ModelDocument::of(&document);
    ASSERT_TRUE(models->openModelNow(folder.path()));
    models->setText(QStringLiteral("the cat sat on the mat"));
    ASSERT_TRUE(models->waitForIdle());
    ASSERT_NE(document.experiment(), nullptr);
    ASSERT_EQ(document.experiment()->source.kind, ExperimentSource::Kind::Model);
    std::unique_ptr<RopeView> view(
        static_cast<RopeView*>(createView(QStringLiteral("rope"), &document)));
    ASSERT_NE(view, nullptr);
    view->ensureFresh();
    const DataTable table = view->data();
    ASSERT_EQ(table.columnLabels.value(0), QStringLiteral("theta"));
    const double theta = config[QStringLiteral("rope_theta")].toDouble();
    const int headDim = config[QStringLiteral("head_dim")].toInt();
    ASSERT_EQ(table.rows, headDim / 2);

    // The forward's own frequencies.
    const std::vector<double> forward = model::ropeInverseFrequencies(models->model()->config);
    ASSERT_EQ(forward.size(), static_cast<std::size_t>(table.rows));
    int kept = 0, divided = 0, between = 0;
    for (int t = 0; t < table.rows; ++t) {
        EXPECT_DOUBLE_EQ(table.at(t, 0), forward[static_cast<std::size_t>(t)]) << t;
        const double plain = 1.0 / std::pow(theta, 2.0 * t / headDim);
        const double wavelength = 2 * std::numbers::pi / plain;
        if (wavelength < kOriginal / kHigh) {
            EXPECT_NEAR(table.at(t, 0), plain, 1e-6 * plain) << t;
            ++kept;
        } else if (wavelength > kOriginal / kLow) {
            EXPECT_NEAR(table.at(t, 0), plain / kFactor, 1e-6 * plain) << t;
            ++divided;
        } else {
            EXPECT_GT(table.at(t, 0), plain / kFactor) << t;
            EXPECT_LT(table.at(t, 0), plain) << t;
            ++between;
        }
    }
    // The config reaches all three cases (else the test could not tell scaled from plain).
    EXPECT_GT(kept, 0);
    EXPECT_GT(divided, 0);
    EXPECT_GT(between, 0);
}

} // namespace
} // namespace attnlab::ui
