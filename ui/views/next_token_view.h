#pragma once
/// NextTokenView: the model's next-token distribution after the last position as a bar chart
/// (token text, probability under the sampling controls, and the model's own probability),
/// with temperature, top-k and top-p controls, a "Sample" button that draws a token, and
/// "Append" (Ctrl+Return) that appends the chosen token so the text grows step by step.
///
/// The view takes plain data (setInput): it is tested alone, and bindNextTokenView()
/// (model_views_binding.h) feeds it from the window's ModelDocument.

#include <QString>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ui/views/view.h"

#include "attnlab/model/sampling.h"

class QCPBars;
class QCPGraph;
class QCPTextElement;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QStackedWidget;

namespace attnlab::ui {

/// What the view draws: the last position's logits of a model run.
struct NextTokenInput {
    QString modelName;         ///< empty: no model is loaded
    std::vector<float> logits; ///< [V] of the last position; empty while no run is available
    /// An id's text as people read it (" the", "\n"); the id itself when unset.
    std::function<QString(std::int64_t)> tokenText;
    /// An id's raw token ("Ġthe", "▁again") for the tooltip; unset: the id only.
    std::function<std::string(std::int64_t)> rawToken;
    QString context;      ///< the end of the text the model continues, for the title
    int ablatedHeads = 0; ///< how many heads are switched off in this run
    /// The same position's logits with no head switched off, when heads are off and that run
    /// is known (same ids): drawn beside the bars so ablation's effect shows. Else empty.
    std::vector<float> baselineLogits;
    /// Why this model predicts no next token (an encoder reads both sides), shown instead of
    /// the chart; empty for a model that does.
    QString noNextToken;
};

class NextTokenView : public View {
    Q_OBJECT
public:
    explicit NextTokenView(Document* document, QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("next-token"); }
    QString title() const override { return tr("Next token"); }
    void refresh() override;
    void paintFigure(QCPPainter& painter, const QSize& size) override;
    DataTable data() const override;
    QString notApplicable() const override { return imageClassifierRefusal(document()); }

    void setInput(NextTokenInput input);
    const NextTokenInput& input() const { return m_input; }
    /// The sampling controls (also set by the spin boxes).
    model::SamplingOptions sampling() const { return m_sampling; }
    void setSampling(const model::SamplingOptions& options);
    /// The kept tokens under sampling(), most likely first.
    const std::vector<model::TokenProbability>& distribution() const { return m_distribution; }
    /// Per kept token, its probability with no head switched off (softmax of baselineLogits at
    /// temperature 1); empty when the input has no baseline.
    const std::vector<double>& baselineProbabilities() const { return m_baseline; }
    /// The chosen token's rank in distribution() (0 = most likely), -1 when there is none.
    int selectedRank() const { return m_selected; }
    void setSelectedRank(int rank);
    /// The chosen token's id, -1 when there is none.
    std::int64_t selectedId() const;
    /// Bars drawn at most (the rest of the kept tokens are summed in a note).
    static constexpr int kMaxBars = 20;

    QPushButton* appendButton() const { return m_append; }
    QPushButton* sampleButton() const { return m_sample; }
    QDoubleSpinBox* temperatureBox() const { return m_temperature; }
    QSpinBox* topKBox() const { return m_topK; }
    QDoubleSpinBox* topPBox() const { return m_topP; }
    /// The message shown instead of the chart (no model, no run), empty when the chart shows.
    QString placeholderText() const;

public slots:
    /// Emits appendRequested(selectedId()) when a token is chosen.
    void appendSelected();
    /// Chooses a token at random from distribution() (inverse CDF of `uniform` in [0, 1)).
    void sampleWith(double uniform);

signals:
    void appendRequested(qint64 id);
    void samplingChanged();

protected:
    void keyPressEvent(QKeyEvent* event) override;

private:
    void recompute();
    QString tokenText(std::int64_t id) const;

    NextTokenInput m_input;
    model::SamplingOptions m_sampling;
    std::vector<model::TokenProbability> m_distribution;
    std::vector<double> m_baseline;
    int m_selected = -1;

    QStackedWidget* m_stack;
    QLabel* m_placeholder;
    QCustomPlot* m_plot;
    QCPTextElement* m_title;
    QCPBars* m_bars;
    QCPBars* m_selectedBar;
    QCPGraph* m_model;
    QCPGraph* m_baselineGraph;
    QLabel* m_note;
    QDoubleSpinBox* m_temperature;
    QSpinBox* m_topK;
    QDoubleSpinBox* m_topP;
    QPushButton* m_sample;
    QPushButton* m_append;
};

} // namespace attnlab::ui
