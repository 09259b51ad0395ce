// The next-token and head-roles views: alone on plain data (the append button emits the
// chosen id, the controls reshape the distribution, the table sorts, a tick asks for exactly
// the ablation it shows), then bound to a ModelDocument on the bundled trained model (append
// grows the ids, a ticked head re-runs the model with one undo step, the probe finds the
// induction head).

#include <QImage>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QUndoStack>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <memory>

#include "ui/document.h"
#include "ui/figure_export.h"
#include "ui/head_roles_view.h"
#include "ui/model_document.h"
#include "ui/model_views_binding.h"
#include "ui/next_token_view.h"
#include "ui/view_registry.h"

namespace attnlab::ui {
namespace {

const QString kDemoModel = QString::fromStdString(
    (std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "resources" /
     "models" / "tiny-llama-induction")
        .string());

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
    ASSERT_TRUE(exportView(view, path, QSize(640, 400)).isEmpty());
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
    input.baselineLogits = {0, 0, 0, 0}; // 0.25 each with every head on
    view.setInput(input);
    view.ensureFresh();
    ASSERT_EQ(view.baselineProbabilities().size(), 4u);
    for (double p : view.baselineProbabilities())
        EXPECT_NEAR(p, 0.25, 1e-12);
    EXPECT_EQ(view.data().cols, 4);
    input.baselineLogits = {1, 2}; // a different vocabulary: not comparable, not drawn
    view.setInput(input);
    EXPECT_TRUE(view.baselineProbabilities().empty());
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
    ASSERT_TRUE(m_roles->showingProbe());
    m_roles->ensureFresh();
    const double top = m_roles->model()->item(0, HeadRolesView::Induction)->text().toDouble();
    EXPECT_GE(top, 0.4);
    EXPECT_GT(rowHead(*m_roles, 0).first, 0); // induction needs an earlier layer to feed it
}

} // namespace
} // namespace attnlab::ui
