#include "ui/export/step_export.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QPageSize>
#include <QPdfWriter>
#include <QSaveFile>
#include <qcustomplot.h>

#include <algorithm>

#include "ui/export/figure_export.h"
#include "ui/state/document.h"
#include "ui/views/flash_stepper_view.h"
#include "ui/views/kv_cache_view.h"
#include "ui/views/translation_view.h"
#include "ui/views/view.h"

namespace attnlab::ui {

bool isStepView(const QString& viewId) {
    return viewId == QLatin1String("flash") || viewId == QLatin1String("kv-cache") ||
           viewId == QLatin1String("translation");
}

std::pair<Index, Index> stepRange(View& view) {
    if (auto* flash = qobject_cast<FlashStepperView*>(&view)) return {0, flash->totalSteps()};
    if (auto* kv = qobject_cast<KvCacheView*>(&view))
        return {0, std::max<Index>(0, kv->stepCount() - 1)};
    if (auto* translation = qobject_cast<TranslationView*>(&view)) {
        translation->ensureFresh();
        return {0, std::max<Index>(0, translation->rowCount() - 1)};
    }
    return {0, 0};
}

namespace {

Index currentStep(View& view, const Document& document) {
    if (auto* translation = qobject_cast<TranslationView*>(&view))
        return translation->currentStep();
    const ViewState& state = document.session().viewState;
    return qobject_cast<KvCacheView*>(&view) ? state.kvStep : state.flashStep;
}

} // namespace

void setStep(View& view, Document& document, Index step) {
    const auto [first, last] = stepRange(view);
    // The translation view's step is the word it is writing, not part of the session.
    if (auto* translation = qobject_cast<TranslationView*>(&view)) {
        translation->goToStep(std::clamp(step, first, last));
        return;
    }
    ViewState state = document.session().viewState;
    const Index clamped = std::clamp(step, first, last);
    if (qobject_cast<KvCacheView*>(&view))
        state.kvStep = clamped;
    else if (qobject_cast<FlashStepperView*>(&view))
        state.flashStep = clamped;
    else
        return;
    document.setViewState(state);
    view.ensureFresh();
}

Status exportSteps(View& view, Document& document, const QString& path, const QSize& size,
                   double scale) {
    if (!isStepView(view.viewId()))
        return exportError(QObject::tr("%1: the view '%2' has no steps").arg(path, view.viewId()));
    if (size.width() <= 0 || size.height() <= 0 || !(scale > 0))
        return exportError(QObject::tr("%1: the figure size must be positive").arg(path));
    view.ensureFresh();
    const auto [first, last] = stepRange(view);
    const Index original = currentStep(view, document);
    Status error;
    if (QFileInfo(path).suffix().compare(QLatin1String("pdf"), Qt::CaseInsensitive) == 0) {
        const QString temporary = path + QStringLiteral(".part");
        {
            QPdfWriter writer(temporary);
            writer.setCreator(QStringLiteral("AttnLab"));
            writer.setTitle(view.title());
            writer.setResolution(72);
            writer.setPageSize(
                QPageSize(QSizeF(size), QPageSize::Point, QString(), QPageSize::ExactMatch));
            writer.setPageMargins(QMarginsF(0, 0, 0, 0));
            QCPPainter painter;
            if (!painter.begin(&writer)) {
                QFile::remove(temporary);
                return exportError(QObject::tr("Cannot write %1").arg(path));
            }
            painter.setMode(QCPPainter::pmVectorized);
            painter.setMode(QCPPainter::pmNoCaching);
            for (Index step = first; step <= last; ++step) {
                if (step > first) writer.newPage();
                setStep(view, document, step);
                painter.fillRect(QRect(QPoint(0, 0), size), view.theme().background);
                view.paintFigure(painter, size);
            }
            painter.end();
        }
        error = publishPdf(temporary, path);
    } else {
        QDir directory(path);
        if (!directory.exists() && !QDir().mkpath(path))
            return exportError(QObject::tr("Cannot create the folder %1").arg(path));
        for (Index step = first; step <= last && !error; ++step) {
            setStep(view, document, step);
            const QImage image = renderFigure(view, size, scale);
            const QString name = directory.filePath(
                QStringLiteral("frame_%1.png").arg(step - first + 1, 4, 10, QLatin1Char('0')));
            QSaveFile file(name);
            if (!file.open(QIODevice::WriteOnly) || !image.save(&file, "PNG") || !file.commit())
                error = exportError(QObject::tr("Cannot write %1").arg(name));
        }
    }
    setStep(view, document, original);
    return error;
}

} // namespace attnlab::ui
