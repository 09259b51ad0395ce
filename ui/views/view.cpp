#include "ui/views/view.h"

#include <QCoreApplication>
#include <QShowEvent>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>

#include "ui/state/dump_document.h"
#include "ui/state/model_document.h"

namespace attnlab::ui {

QString imageClassifierRefusal(const Document* document) {
    const ModelDocument* models = ModelDocument::of(const_cast<Document*>(document));
    if (!models->readsImages()) return {};
    return QCoreApplication::translate(
               "attnlab::ui::View",
               "%1 is an image model: it reads an image, not text, so it has no next "
               "token, no text to translate and no token to predict. See the Image tab.")
        .arg(models->displayName());
}

DataTable DataTable::fromMatrix(const MatrixD& matrix, const QStringList& rowLabels,
                                const QStringList& columnLabels) {
    DataTable table;
    table.rows = static_cast<int>(matrix.rows());
    table.cols = static_cast<int>(matrix.cols());
    table.rowLabels = rowLabels;
    table.columnLabels = columnLabels;
    table.values.resize(static_cast<std::size_t>(table.rows) * table.cols);
    for (int i = 0; i < table.rows; ++i)
        for (int j = 0; j < table.cols; ++j)
            table.values[static_cast<std::size_t>(i) * table.cols + j] = matrix(i, j);
    return table;
}

View::View(Document* document, QWidget* parent) : QWidget(parent), m_document(document) {
    connect(document, &Document::changed, this, [this](Document::What what) {
        if (dependsOn(what)) markStale();
    });
}

Theme View::theme() const {
    Theme look = themeNamed(QString::fromStdString(m_document->session().viewState.theme));
    if (m_figureStyle.fontPoints > 0) {
        look.fontPointSize = m_figureStyle.fontPoints;
        look.minimumFontPointSize =
            m_figureStyle.minFontPoints > 0
                ? std::min(m_figureStyle.minFontPoints, m_figureStyle.fontPoints)
                : m_figureStyle.fontPoints;
        look.deviceUnitFonts = true;
    }
    return look;
}

void View::setFigureStyle(const FigureStyle& style) {
    m_figureStyle = style;
    m_stale = true;
    if (isVisible()) ensureFresh();
}

bool View::dependsOn(Document::What what) const {
    return what == Document::What::Experiment || what == Document::What::ViewState ||
           what == Document::What::Selection;
}

void View::markStale() {
    m_stale = true;
    if (isVisible()) ensureFresh();
}

void View::ensureFresh() {
    if (!m_stale) return;
    m_stale = false;
    refresh();
}

void View::refreshNow() {
    m_stale = false;
    refresh();
}

void View::ensureComplete() {
    // A long text's layer being computed on the worker is what the view will show.
    if (auto* dumps = m_document->findChild<DumpDocument*>(QString(), Qt::FindDirectChildrenOnly))
        dumps->waitForLayer();
    ensureFresh();
    waitForWork();
    ensureFresh();
}

void View::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    ensureFresh();
}

void View::paintFigure(QCPPainter& painter, const QSize& size) {
    const QSize old = this->size();
    resize(size);
    render(&painter, QPoint(), QRegion(), QWidget::DrawChildren);
    resize(old);
}

PlotView::PlotView(Document* document, QWidget* parent)
    : View(document, parent), m_plot(new QCustomPlot(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    m_plot->setNoAntialiasingOnDrag(true);
}

void PlotView::paintFigure(QCPPainter& painter, const QSize& size) {
    m_plot->toPainter(&painter, size.width(), size.height());
}

} // namespace attnlab::ui
