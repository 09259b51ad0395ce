#pragma once
/// FillMaskView: an encoder (BERT) filling in [MASK]: the masked-LM head's top fillers for the
/// chosen mask, with the sentence read back with the best one, and the mask's attention row in
/// the chosen layer and head as bars over every token — both sides coloured apart, with the
/// share each side gets, the contrast with the causal mask of a decoder, which sees only its
/// left.
///
/// It draws the window's ModelDocument (its latest run: an encoder's runs keep every
/// position's logits). Not applicable to a model without a masked-LM head; without a model it
/// says how to open the bundled one.

#include <QStringList>

#include <cstdint>
#include <vector>

#include "ui/views/view.h"

class QCPAxisRect;
class QCPBars;
class QCPLegend;
class QCPTextElement;
class QComboBox;

namespace attnlab::ui {

class FillMaskView : public View {
    Q_OBJECT
public:
    explicit FillMaskView(Document* document, QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("fill-mask"); }
    QString title() const override { return tr("Fill mask"); }
    void refresh() override;
    void paintFigure(QCPPainter& painter, const QSize& size) override;
    DataTable data() const override;
    QString notApplicable() const override;

    /// Token positions of the masks in the text, in order.
    const std::vector<Index>& maskPositions() const { return m_masks; }
    /// The mask shown, an index into maskPositions(); -1 when the text has none.
    int currentMask() const { return m_masks.empty() ? -1 : m_mask; }
    void setCurrentMask(int index);
    /// The fillers drawn, most likely first: token ids and the model's probabilities.
    const std::vector<std::int64_t>& fillerIds() const { return m_fillerIds; }
    const std::vector<double>& fillerProbabilities() const { return m_fillerProbabilities; }
    QStringList fillerTexts() const { return m_fillerTexts; }
    /// The mask's attention row as drawn, one weight per token.
    const std::vector<double>& maskRow() const { return m_row; }
    /// The row's weight on the tokens before and after the mask.
    double leftShare() const { return m_left; }
    double rightShare() const { return m_right; }
    /// Fillers drawn at most.
    static constexpr int kFillers = 10;

private:
    QComboBox* m_maskBox = nullptr;
    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPTextElement* m_sentence = nullptr;
    QCPAxisRect* m_fillRect = nullptr;
    QCPAxisRect* m_rowRect = nullptr;
    QCPBars* m_fillBars = nullptr;
    QCPBars* m_leftBars = nullptr;
    QCPBars* m_rightBars = nullptr;
    QCPBars* m_maskBar = nullptr;
    QCPLegend* m_legend = nullptr;

    std::vector<Index> m_masks;
    int m_mask = 0;
    std::vector<std::int64_t> m_fillerIds;
    std::vector<double> m_fillerProbabilities;
    QStringList m_fillerTexts;
    QStringList m_tokens;
    std::vector<double> m_row;
    double m_left = 0, m_right = 0;
};

} // namespace attnlab::ui
