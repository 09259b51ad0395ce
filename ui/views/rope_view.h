#pragma once
/// RopeView: rotary position embedding (Su et al. 2021) made visible. For the selected query
/// and a key (the one it attends to most), each frequency pair of the focused head's q and k
/// is drawn as 2-D arrows before and after rotation by pos * theta_i, on equal axes (a unit
/// of x is as many pixels as a unit of y, so angles read true) with the unit circle and an
/// arc for each vector's rotation angle (m theta_i for the query, n theta_i for the key), the
/// caption naming theta_i and m theta_i. Below, the score
/// q_m . k_n against the relative distance m - n at several absolute offsets: the curves lie
/// on top of each other because RoPE scores depend only on m - n. Both pairings are shown:
/// interleaved (0,1),(2,3),... and half (i, i + D/2).

#include <QVector>

#include <vector>

#include "ui/views/view.h"

class QCPAxisRect;
class QCPGraph;
class QCPTextElement;

namespace attnlab::ui {

class RopeView : public PlotView {
    Q_OBJECT
public:
    /// At most this many frequency pairs get their own arrow panel, spread from the fastest
    /// to the slowest, on one row: two rows of four left every plot of the view about 47 px
    /// tall on a 1280 x 720 projector (the table holds every pair).
    static constexpr int kMaxPairPanels = 4;
    /// Absolute offsets of the key position at which the distance curve is evaluated.
    static constexpr int kOffsets[3] = {0, 7, 50};

    explicit RopeView(Document* document, QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("rope"); }
    QString title() const override { return tr("RoPE"); }
    void refresh() override;
    QString notApplicable() const override;
    DataTable data() const override;

    /// The score curve (relative distance, q.k) at kOffsets[offsetIndex] for the session's
    /// pairing, as drawn; offsetIndex 3 is the other pairing at offset 0.
    QVector<QPointF> plottedScores(int offsetIndex) const;
    /// Number of pair panels drawn.
    int pairPanelCount() const { return m_panelCount; }

    /// One drawn frequency pair: its axes, the angles its query and key are rotated by.
    struct PairPanel {
        Index pair = 0;
        QCPAxisRect* rect = nullptr;
        double radius = 1;     ///< the data radius the panel must show (vectors, unit circle)
        double queryAngle = 0; ///< m theta_i, radians (m the query's position)
        double keyAngle = 0;   ///< n theta_i, radians (n the key's position)
    };
    const std::vector<PairPanel>& pairPanels() const { return m_pairs; }

private:
    /// After each layout (screen or figure): ranges giving a unit the same pixels on both axes
    /// of every pair panel, the whole circle of `radius` visible.
    void equalizePairAxes();

    QCPTextElement* m_title = nullptr;
    QCPAxisRect* m_distanceRect = nullptr;
    QCPGraph* m_curves[4] = {nullptr, nullptr, nullptr, nullptr};
    int m_panelCount = 0;
    std::vector<PairPanel> m_pairs;
    DataTable m_table;
};

} // namespace attnlab::ui
