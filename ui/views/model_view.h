#pragma once
/// ModelView: every (layer, head) of a model dump as a layers x heads grid of thumbnails
/// (one QImage each, block-averaged, each scaled to its own maximum). Clicking a thumbnail
/// shows that layer and head in the heatmap.

#include <QImage>
#include <QString>

#include <vector>

#include "ui/views/view.h"

namespace attnlab::ui {

class DumpDocument;

class ModelView : public View {
    Q_OBJECT
public:
    /// Thumbnails have at most this many pixels on a side (one pixel per token below).
    static constexpr int kMaxThumbnailPixels = 64;

    explicit ModelView(Document* document, QWidget* parent = nullptr);
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

signals:
    void headActivated(int layer, int head);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    bool dependsOn(Document::What what) const override;

private:
    void rebuild();
    struct Layout {
        QRect grid;
        int cell = 0;
        int gap = 0;
    };
    Layout layout() const;

    DumpDocument* m_dumps;
    std::vector<QImage> m_images;
    int m_layers = 0;
    int m_heads = 0;
    quint64 m_generation = 1; ///< bumped when the dump changes
    quint64 m_builtGeneration = 0;
    QString m_builtColormap;
};

} // namespace attnlab::ui
