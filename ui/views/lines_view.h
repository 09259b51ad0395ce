#pragma once
/// LinesView (BertViz style): query tokens in a left column, key tokens in a right column,
/// and a line from query i to key j whose thickness and opacity are the weight w_ij of the
/// focused head. Hovering a token isolates its lines (a query's row, or a key's column); the
/// selected query is isolated the same way. Masked cells draw no line. A long text shows a
/// window of kMaxShownTokens queries and keys around the selected query (its labels carry their
/// positions), so its labels stay readable and the figure stays on the page.

#include <QPointF>
#include <QRectF>

#include "ui/views/view.h"

class QPainter;

namespace attnlab::ui {

class LinesView : public View {
    Q_OBJECT
public:
    /// Lines thinner than this weight are not drawn.
    static constexpr double kMinWeight = 0.01;
    /// At most this many queries (and keys) are drawn: a longer text shows a window of them.
    static constexpr Index kMaxShownTokens = 24;

    explicit LinesView(Document* document, QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("lines"); }
    QString title() const override { return tr("Lines"); }
    void refresh() override;
    void paintFigure(QCPPainter& painter, const QSize& size) override;
    DataTable data() const override;

    /// Which token the pointer isolates: side 0 = query (left), 1 = key (right); index -1 none.
    struct Focus {
        int side = 0;
        Index index = -1;
    };
    Focus isolated() const { return m_hover; }
    /// Isolates a token's lines as hovering does (index -1 clears).
    void isolateToken(int side, Index index);
    /// The token under a widget position at the current size, index -1 when none.
    Focus tokenAt(const QPointF& position) const;
    /// Tooltips: the hovered token as shown and raw (token_tooltips.h).
    bool event(QEvent* event) override;
    /// Number of lines the figure draws now (weight above kMinWeight, isolated if focused).
    int lineCount() const;
    /// The query and key labels drawn now (with their positions when the text is windowed).
    QStringList queryLabels() const { return m_queries; }
    QStringList keyLabels() const { return m_keys; }
    /// The first query and key drawn (0 unless the text is longer than kMaxShownTokens).
    Index firstQuery() const { return m_queryOffset; }
    Index firstKey() const { return m_keyOffset; }

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;

private:
    struct Layout {
        QRectF title;
        double leftX = 0, rightX = 0; ///< x of the line ends
        double top = 0, rowHeight = 0;
        double labelWidth = 0;
    };
    Layout layoutFor(const QSizeF& size) const;
    /// Draws the figure into any painter (widget, image, SVG, PDF).
    void draw(QPainter& painter, const QSizeF& size) const;
    bool lineShown(Index query, Index key) const;

    MatrixD m_weights; ///< the window drawn: queries and keys from the offsets below
    Index m_queryOffset = 0, m_keyOffset = 0;
    Index m_totalQueries = 0, m_totalKeys = 0;
    MatrixD m_allWeights; ///< the whole head (data export)
    QStringList m_allQueries, m_allKeys;
    QStringList m_queries;
    QStringList m_keys;
    std::vector<std::string> m_rawQueries, m_rawKeys; ///< as the tokenizer wrote them
    Index m_head = 0;
    Index m_selectedQuery = -1;
    Focus m_hover;
};

} // namespace attnlab::ui
