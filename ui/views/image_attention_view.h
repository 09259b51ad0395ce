#pragma once
/// ImageAttentionView: an image classifier's attention drawn on its image. The picture as the
/// model reads it (resized to its square; grey under the overlay, its own colours with the
/// overlay off), cut into its patch grid; over each patch, the
/// attention the chosen token pays it: the focused head of the shown layer, the mean of the
/// layer's heads, or attention rollout through the layers up to the shown one (Abnar &
/// Zuidema 2020). A colour bar beside it, the classifier's top classes with their
/// probabilities on the right. The chosen token is the selected query: the class token
/// "[CLS]" by default; click a patch to see where that patch looks, click outside the image
/// for the class token again.
///
/// It reads the window's ModelDocument (an image classifier with an image, see
/// File > Open Image...). Costs per redraw (T tokens, H heads, L layers, hd head dim): a head
/// O(T hd) once its pass is computed (one row), the mean O(H T^2 hd), rollout O(L H T^2 hd +
/// L T^3), kept for the run until it changes.

#include <QFont>
#include <QImage>
#include <QRectF>
#include <QString>

#include <memory>
#include <vector>

#include "attnlab/base/tensor.h"
#include "attnlab/model/image_attention.h"
#include "ui/views/view.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QSlider;

namespace attnlab::model {
struct ModelRun;
}

namespace attnlab::ui {

class ImageCanvas;

class ImageAttentionView : public View {
    Q_OBJECT
public:
    /// What the overlay shows.
    enum class Mode { Head, MeanOfHeads, Rollout };

    explicit ImageAttentionView(Document* document, QWidget* parent = nullptr);
    ~ImageAttentionView() override;
    QString viewId() const override { return QStringLiteral("image-attention"); }
    QString title() const override { return tr("Image"); }
    void refresh() override;
    void paintFigure(QCPPainter& painter, const QSize& size) override;
    DataTable data() const override;
    QString notApplicable() const override;

    Mode mode() const { return m_mode; }
    void setMode(Mode mode);
    /// How strongly the overlay covers the picture, 0..1.
    double opacity() const { return m_opacity; }
    void setOpacity(double opacity);

    /// The token whose attention is drawn (0: the class token).
    Index queryToken() const;
    /// The overlay's values per patch, row by row (grid x grid); empty when nothing is shown.
    const std::vector<double>& patchValues() const { return m_values; }
    /// What the overlay's title says (the figure's title line).
    QString caption() const { return m_caption; }
    /// The message shown instead of the picture; empty when the picture shows.
    QString placeholderText() const { return m_placeholder; }
    /// The token under a point of the canvas (the class token outside the image), or -1.
    Index tokenAt(const QPointF& point) const;
    QWidget* canvas() const;

    /// Draws the figure into `painter` in `size` (the canvas and export).
    void draw(QPainter& painter, const QSize& size) const;

protected:
    bool dependsOn(Document::What what) const override;

private:
    friend class ImageCanvas;
    /// Where each part of the figure goes in `size`, measured with `font` on `device`.
    struct Layout {
        double line = 0; ///< the font's line height
        QRectF title, chip, square, bar, labels;
    };
    Layout layoutFor(const QSize& size, const QFont& font, QPaintDevice* device) const;
    /// `base` at the theme's (or the figure's) text size.
    QFont figureFont(const QFont& base) const;

    Mode m_mode = Mode::Head;
    double m_opacity = 0.6;
    std::vector<double> m_values;
    std::vector<model::LabelProbability> m_labels;
    /// A model without classes (DINOv2, CLIP): what it gives instead; empty with a classifier.
    QString m_noClasses;
    QString m_caption;
    QString m_placeholder;
    /// Rollout of the run it was computed for, per top layer.
    std::shared_ptr<const model::ModelRun> m_rolloutRun;
    Index m_rolloutLayers = -1;
    Matrix m_rollout;
    /// The run's picture in grey (drawn under the overlay), and which picture it is of.
    mutable QImage m_grey;
    mutable qint64 m_greyKey = -1;

    QComboBox* m_modeBox;
    QSlider* m_opacitySlider;
    ImageCanvas* m_canvas;
};

} // namespace attnlab::ui
