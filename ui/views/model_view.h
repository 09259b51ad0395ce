#pragma once
/// ModelView: every (layer, head) of a model dump as a layers x heads grid of thumbnails
/// (one QImage each, block-averaged, each scaled to its own maximum) filling the view, with
/// the query tokens down the first column's left and the key tokens under its last row.
/// Clicking a thumbnail shows that layer and head in the heatmap. The thumbnails are the
/// DumpDocument's (requestThumbnails): a model's run computes every head's map for its
/// thumbnail, past DumpDocument::kInlineThumbnailCells in all (a long text) on a worker, the grid
/// drawn empty with "computing" in its title meanwhile.

#include <QFont>
#include <QImage>
#include <QString>
#include <QStringList>

#include <vector>

#include "ui/views/view.h"

namespace attnlab::ui {

class DumpDocument;

class ModelView : public View {
    Q_OBJECT
public:
    /// Thumbnails have at most this many pixels on a side (one pixel per token below).
    static constexpr int kMaxThumbnailPixels = 64;
    /// Token labels take at most this many pixels beside or under the grid (longer ones are
    /// elided).
    static constexpr int kMaxTokenLabelRoom = 90;

    explicit ModelView(Document* document, QWidget* parent = nullptr);
    ~ModelView() override;
    QString viewId() const override { return QStringLiteral("model"); }
    QString title() const override { return tr("Model"); }
    void refresh() override;
    /// Per (layer, head): mean entropy, mean distance, first-token mass (the statistics table).
    DataTable data() const override;

    int layers() const { return m_layers; }
    int heads() const { return m_heads; }
    /// The widget rectangle of thumbnail (layer, head); empty outside the grid.
    QRect thumbnailRect(int layer, int head) const;
    /// The thumbnail image of (layer, head) (tests and export).
    const QImage& thumbnail(int layer, int head) const;
    /// The token labels of the last paint (queries down the left, keys along the foot), as
    /// drawn: thinned to one per text line where the thumbnails are small.
    QStringList drawnTokenLabels() const { return m_drawnTokenLabels; }
    /// True while the thumbnails are computed on a worker.
    bool computing() const;

signals:
    void headActivated(int layer, int head);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    bool dependsOn(Document::What what) const override;
    void waitForWork() override;

private:
    void rebuild();
    struct Layout {
        QRect grid;
        QSize cell; ///< a thumbnail (heads share the width, layers the height)
        int gap = 0;
    };
    Layout layout() const;
    /// The token labels' font, and the room they take left of and under the grid.
    QFont tokenFont() const;
    int tokenColumnWidth() const;
    int tokenRowHeight() const;
    void paintTokens(QPainter& painter, const Layout& grid);

    DumpDocument* m_dumps;
    int m_layers = 0;
    int m_heads = 0;
    QStringList m_queryTokens, m_keyTokens; ///< as read, when the dump has tokens
    mutable QStringList m_drawnTokenLabels;
};

} // namespace attnlab::ui
