#include "ui/figure_export.h"

#include <QClipboard>
#include <QFile>
#include <QFileInfo>
#include <QGuiApplication>
#include <QPageSize>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QTextStream>
#include <qcustomplot.h>

#include <cmath>

#include "ui/view.h"

namespace attnlab::ui {

namespace {

QString csvField(QString text) {
    if (text.contains(QLatin1Char(',')) || text.contains(QLatin1Char('"')) ||
        text.contains(QLatin1Char('\n'))) {
        text.replace(QLatin1String("\""), QLatin1String("\"\""));
        return QLatin1Char('"') + text + QLatin1Char('"');
    }
    return text;
}

QString writeCsv(const DataTable& table, const QString& path) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text))
        return QObject::tr("Cannot write %1: %2").arg(path, file.errorString());
    QTextStream out(&file);
    out << csvField(QObject::tr("token"));
    for (const QString& column : table.columnLabels)
        out << ',' << csvField(column);
    out << '\n';
    for (int r = 0; r < table.rows; ++r) {
        out << csvField(r < table.rowLabels.size() ? table.rowLabels[r] : QString::number(r));
        for (int c = 0; c < table.cols; ++c) {
            const double value = table.at(r, c);
            out << ',';
            if (std::isfinite(value)) out << QString::number(value, 'g', 9);
        }
        out << '\n';
    }
    out.flush();
    if (!file.commit()) return QObject::tr("Cannot write %1: %2").arg(path, file.errorString());
    return {};
}

QString writeNpyTable(const DataTable& table, const QString& path) {
    NpyArray array;
    array.shape = {table.rows, table.cols};
    array.dtype = DType::Float64;
    array.data.assign(table.values.begin(), table.values.end());
    if (const Status status = writeNpy(path.toStdString(), array, DType::Float64))
        return QString::fromStdString(status->message);
    return {};
}

} // namespace

bool exportFormatFor(const QString& path, ExportFormat* format) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("png"))
        *format = ExportFormat::Png;
    else if (suffix == QLatin1String("svg"))
        *format = ExportFormat::Svg;
    else if (suffix == QLatin1String("pdf"))
        *format = ExportFormat::Pdf;
    else if (suffix == QLatin1String("csv"))
        *format = ExportFormat::Csv;
    else if (suffix == QLatin1String("npy"))
        *format = ExportFormat::Npy;
    else
        return false;
    return true;
}

QString exportFilter() {
    return QObject::tr("PNG image (*.png);;SVG vector (*.svg);;PDF document (*.pdf);;"
                       "CSV data (*.csv);;NumPy data (*.npy)");
}

QImage renderFigure(View& view, const QSize& size, double scale) {
    view.ensureFresh();
    const QSize pixels(std::max(1, static_cast<int>(std::lround(size.width() * scale))),
                       std::max(1, static_cast<int>(std::lround(size.height() * scale))));
    QImage image(pixels, QImage::Format_ARGB32_Premultiplied);
    image.fill(view.theme().background);
    QCPPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setRenderHint(QPainter::TextAntialiasing);
    painter.scale(scale, scale);
    view.paintFigure(painter, size);
    painter.end();
    return image;
}

QString exportView(View& view, const QString& path, const QSize& size, double scale) {
    ExportFormat format;
    if (!exportFormatFor(path, &format))
        return QObject::tr("%1: unknown file type (use .png, .svg, .pdf, .csv or .npy)").arg(path);
    if (size.width() <= 0 || size.height() <= 0 || !(scale > 0))
        return QObject::tr("%1: the figure size must be positive").arg(path);
    view.ensureFresh();
    switch (format) {
    case ExportFormat::Png: {
        const QImage image = renderFigure(view, size, scale);
        QSaveFile file(path);
        if (!file.open(QIODevice::WriteOnly) || !image.save(&file, "PNG") || !file.commit())
            return QObject::tr("Cannot write %1").arg(path);
        return {};
    }
    case ExportFormat::Svg: {
        const QString temporary = path + QStringLiteral(".part");
        {
            QSvgGenerator generator;
            generator.setFileName(temporary);
            generator.setSize(size);
            generator.setViewBox(QRect(QPoint(0, 0), size));
            generator.setTitle(view.title());
            generator.setDescription(QObject::tr("AttnLab figure"));
            QCPPainter painter(&generator);
            painter.setMode(QCPPainter::pmVectorized);
            painter.setMode(QCPPainter::pmNoCaching);
            painter.fillRect(QRect(QPoint(0, 0), size), view.theme().background);
            view.paintFigure(painter, size);
        }
        QFile::remove(path);
        if (!QFile::rename(temporary, path)) return QObject::tr("Cannot write %1").arg(path);
        return {};
    }
    case ExportFormat::Pdf: {
        const QString temporary = path + QStringLiteral(".part");
        {
            QPdfWriter writer(temporary);
            writer.setCreator(QStringLiteral("AttnLab"));
            writer.setTitle(view.title());
            writer.setResolution(72); // one device unit per point: the page is `size` points
            writer.setPageSize(
                QPageSize(QSizeF(size), QPageSize::Point, QString(), QPageSize::ExactMatch));
            writer.setPageMargins(QMarginsF(0, 0, 0, 0));
            QCPPainter painter;
            if (!painter.begin(&writer)) return QObject::tr("Cannot write %1").arg(path);
            painter.setMode(QCPPainter::pmVectorized);
            painter.setMode(QCPPainter::pmNoCaching);
            painter.fillRect(QRect(QPoint(0, 0), size), view.theme().background);
            view.paintFigure(painter, size);
            painter.end();
        }
        QFile::remove(path);
        if (!QFile::rename(temporary, path)) return QObject::tr("Cannot write %1").arg(path);
        return {};
    }
    case ExportFormat::Csv:
    case ExportFormat::Npy: {
        const DataTable table = view.data();
        if (table.rows == 0 || table.cols == 0)
            return QObject::tr("%1: this view has no data to export").arg(path);
        return format == ExportFormat::Csv ? writeCsv(table, path) : writeNpyTable(table, path);
    }
    }
    return {};
}

void copyFigureToClipboard(View& view, const QSize& size) {
    if (QClipboard* clipboard = QGuiApplication::clipboard())
        clipboard->setImage(renderFigure(view, size, 2.0));
}

} // namespace attnlab::ui
