#include "ui/export/figure_export.h"

#include <QClipboard>
#include <QFile>
#include <QFileInfo>
#include <QGuiApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPageSize>
#include <QPdfWriter>
#include <QSaveFile>
#include <QBuffer>
#include <QRegularExpression>
#include <QSvgGenerator>
#include <QTextStream>
#include <qcustomplot.h>

#include <cmath>

#include "ui/state/experiment_data.h"
#include "ui/views/view.h"

namespace attnlab::ui {

namespace {

/// Qt names fonts by its own family names ("Sans Serif"); SVG readers take CSS's: the generic
/// families by their CSS names, any other family followed by sans-serif as the fallback.
QByteArray cssFontFamilies(QByteArray svg) {
    static const QRegularExpression family(QStringLiteral("font-family=\"([^\"]*)\""));
    QString text = QString::fromUtf8(svg);
    QString out;
    qsizetype last = 0;
    for (auto it = family.globalMatch(text); it.hasNext();) {
        const QRegularExpressionMatch match = it.next();
        const QString name = match.captured(1);
        QString css;
        if (name == QLatin1String("Sans Serif") || name == QLatin1String("Sans"))
            css = QStringLiteral("sans-serif");
        else if (name == QLatin1String("Serif"))
            css = QStringLiteral("serif");
        else if (name == QLatin1String("Monospace"))
            css = QStringLiteral("monospace");
        else
            css = QStringLiteral("'%1', sans-serif").arg(name);
        out += QStringView(text).mid(last, match.capturedStart() - last);
        out += QStringLiteral("font-family=\"%1\"").arg(css);
        last = match.capturedEnd();
    }
    out += QStringView(text).mid(last);
    return out.toUtf8();
}

QString csvField(QString text) {
    // Leading or trailing spaces (" cat", a byte-level token) survive only inside quotes.
    const bool edgeSpace = !text.isEmpty() && (text.front().isSpace() || text.back().isSpace());
    if (edgeSpace || text.contains(QLatin1Char(',')) || text.contains(QLatin1Char('"')) ||
        text.contains(QLatin1Char('\n'))) {
        text.replace(QLatin1String("\""), QLatin1String("\"\""));
        return QLatin1Char('"') + text + QLatin1Char('"');
    }
    return text;
}

/// The blocks of a grouped table (one block when it has none).
int groupCount(const DataTable& table) {
    const auto groups = static_cast<int>(table.groupLabels.size());
    return groups > 0 && table.rows % groups == 0 ? groups : 1;
}

Status writeCsv(const DataTable& table, const QString& path) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text))
        return exportError(QObject::tr("Cannot write %1: %2").arg(path, file.errorString()));
    QTextStream out(&file);
    const int groups = groupCount(table);
    const bool grouped = groups > 1 || !table.groupLabels.isEmpty();
    const int perGroup = table.rows / groups;
    if (grouped) out << csvField(table.groupHeader) << ',';
    out << csvField(table.rowHeader.isEmpty() ? QObject::tr("token") : table.rowHeader);
    for (const QString& column : table.columnLabels)
        out << ',' << csvField(column);
    out << '\n';
    for (int r = 0; r < table.rows; ++r) {
        if (grouped) out << csvField(table.groupLabels.value(r / std::max(1, perGroup))) << ',';
        out << csvField(r < table.rowLabels.size() ? table.rowLabels[r] : QString::number(r));
        for (int c = 0; c < table.cols; ++c) {
            const double value = table.at(r, c);
            out << ',';
            if (!std::isfinite(value)) continue;
            // Counts and bytes stay whole numbers; the rest keeps a float32's 9 digits.
            if (value == std::floor(value) && std::abs(value) < 1e15)
                out << QString::number(static_cast<qint64>(value));
            else
                out << QString::number(value, 'g', 9);
        }
        out << '\n';
    }
    out.flush();
    if (!file.commit())
        return exportError(QObject::tr("Cannot write %1: %2").arg(path, file.errorString()));
    return {};
}

Status writeNpyTable(const DataTable& table, const QString& path) {
    NpyArray array;
    const int groups = groupCount(table);
    if (groups > 1 || !table.groupLabels.isEmpty())
        array.shape = {groups, table.rows / groups, table.cols};
    else
        array.shape = {table.rows, table.cols};
    array.dtype = DType::Float64;
    array.data64.assign(table.values.begin(),
                        table.values.end()); // full precision, not rounded through float
    return writeNpy(path.toStdString(), array, DType::Float64);
}

Status writeJsonTable(const View& view, const DataTable& table, const QString& path) {
    QJsonArray rows;
    for (int r = 0; r < table.rows; ++r) {
        QJsonArray row;
        for (int c = 0; c < table.cols; ++c) {
            const double value = table.at(r, c);
            row.append(std::isfinite(value) ? QJsonValue(value) : QJsonValue());
        }
        rows.append(row);
    }
    QJsonObject root = QJsonObject::fromVariantMap(table.extra);
    root.insert(QStringLiteral("view"), view.viewId());
    root.insert(QStringLiteral("title"), view.title());
    if (const Experiment* experiment = view.document()->experiment()) {
        const Index head = clampedHead(*experiment, view.document()->session().viewState.head);
        const ExperimentSource& source = experiment->source;
        root.insert(QStringLiteral("source"),
                    source.isSession()
                        ? QObject::tr("random projections (seed %1)").arg(experiment->session.seed)
                        : QString::fromStdString(source.name));
        root.insert(QStringLiteral("layer"), source.layer >= 0
                                                 ? QJsonValue(static_cast<qint64>(source.layer))
                                                 : QJsonValue());
        root.insert(QStringLiteral("head"), static_cast<qint64>(head));
        root.insert(QStringLiteral("caption"), figureCaption(*experiment, head));
    }
    root.insert(QStringLiteral("row_header"),
                table.rowHeader.isEmpty() ? QObject::tr("token") : table.rowHeader);
    root.insert(QStringLiteral("row_labels"), QJsonArray::fromStringList(table.rowLabels));
    root.insert(QStringLiteral("column_labels"), QJsonArray::fromStringList(table.columnLabels));
    const int groups = groupCount(table);
    if (groups > 1 || !table.groupLabels.isEmpty()) {
        root.insert(QStringLiteral("group_header"), table.groupHeader);
        root.insert(QStringLiteral("groups"), QJsonArray::fromStringList(table.groupLabels));
        root.insert(QStringLiteral("rows_per_group"), table.rows / groups);
    }
    root.insert(QStringLiteral("shape"), QJsonArray{table.rows, table.cols});
    root.insert(QStringLiteral("values"), rows);
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return exportError(QObject::tr("Cannot write %1: %2").arg(path, file.errorString()));
    file.write(QJsonDocument(root).toJson(QJsonDocument::Indented));
    if (!file.commit())
        return exportError(QObject::tr("Cannot write %1: %2").arg(path, file.errorString()));
    return {};
}

QString noDataReason(const View& view, const DataTable& table) {
    if (!table.unavailable.isEmpty()) return table.unavailable;
    return QObject::tr("the %1 view has no numbers to export now").arg(view.title());
}

/// Applies a figure style to a view for the length of an export, then puts the old one back.
class StyleScope {
public:
    StyleScope(View& view, const FigureStyle& style) : m_view(view), m_old(view.figureStyle()) {
        m_view.setFigureStyle(style);
        m_view.ensureComplete();
    }
    ~StyleScope() { m_view.setFigureStyle(m_old); }
    StyleScope(const StyleScope&) = delete;
    StyleScope& operator=(const StyleScope&) = delete;

private:
    View& m_view;
    FigureStyle m_old;
};

} // namespace

bool isFigureFormat(ExportFormat format) {
    return format == ExportFormat::Png || format == ExportFormat::Svg ||
           format == ExportFormat::Pdf;
}

QList<FigurePreset> figurePresets() {
    // Sizes in points. Paper text is 7-9 pt (a caption's size); a slide's body text is about
    // 18 pt and a poster's about 24 pt, read from a few metres.
    return {
        {QStringLiteral("column"), QObject::tr("One column (3.3 in)"), QSize(238, 200), 8, 7, 9,
         true},
        {QStringLiteral("page"), QObject::tr("Two columns (6.9 in)"), QSize(497, 300), 9, 7, 9},
        {QStringLiteral("slide"), QObject::tr("Slide 16:9 (13.33 \u00d7 7.5 in)"), QSize(960, 540),
         18, 14, 20},
        {QStringLiteral("poster"), QObject::tr("Poster panel (16 \u00d7 12 in)"), QSize(1152, 864),
         24, 20, 28},
    };
}

FigureOptions figureOptionsOf(const FigurePreset& preset) {
    FigureOptions options;
    options.size = preset.size;
    options.style.fontPoints = preset.fontPoints;
    options.style.minFontPoints = preset.minFontPoints;
    options.fitHeight = preset.fitsHeight;
    return options;
}

std::optional<FigurePreset> figurePresetNamed(const QString& name) {
    for (const FigurePreset& preset : figurePresets())
        if (preset.name == name) return preset;
    return std::nullopt;
}

QString dataExportFilter() {
    return QObject::tr("CSV data (*.csv);;NumPy data (*.npy);;JSON data (*.json)");
}

Status exportData(View& view, const QString& path) {
    ExportFormat format;
    if (!exportFormatFor(path, &format) || isFigureFormat(format))
        return exportError(
            QObject::tr("%1: unknown data file type (use .csv, .npy or .json)").arg(path));
    view.ensureComplete();
    const DataTable table = view.data();
    if (table.rows == 0 || table.cols == 0)
        return exportError(QObject::tr("%1: %2").arg(path, noDataReason(view, table)));
    switch (format) {
    case ExportFormat::Csv:
        return writeCsv(table, path);
    case ExportFormat::Npy:
        return writeNpyTable(table, path);
    default:
        return writeJsonTable(view, table, path);
    }
}

QString dataUnavailable(View& view) {
    if (const QString why = view.notApplicable(); !why.isEmpty()) return why;
    view.ensureFresh();
    const DataTable table = view.data();
    if (table.rows > 0 && table.cols > 0) return {};
    return noDataReason(view, table);
}

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
    else if (suffix == QLatin1String("json"))
        *format = ExportFormat::Json;
    else
        return false;
    return true;
}

Status publishPdf(const QString& temporary, const QString& path) {
    QFile file(temporary);
    if (!file.open(QIODevice::ReadWrite))
        return exportError(QObject::tr("Cannot write %1").arg(path));
    QByteArray bytes = file.readAll();
    static const QByteArray key = QByteArrayLiteral("/CreationDate (D:");
    const qsizetype at = bytes.indexOf(key);
    const qsizetype end = at < 0 ? -1 : bytes.indexOf(')', at + key.size());
    if (at >= 0 && end > at) {
        // D:YYYYMMDDHHmmSS then a zone ("Z" or "+hh'mm'"): keep the length, zero the time.
        QByteArray date = bytes.mid(at + key.size(), end - at - key.size());
        if (date.size() >= 14) {
            date.replace(0, 14, QByteArrayLiteral("19800101000000"));
            bytes.replace(at + key.size(), date.size(), date);
            if (!file.seek(0) || file.write(bytes) != bytes.size()) {
                file.close();
                QFile::remove(temporary);
                return exportError(QObject::tr("Cannot write %1").arg(path));
            }
        }
    }
    file.close();
    QFile::remove(path);
    if (!QFile::rename(temporary, path))
        return exportError(QObject::tr("Cannot write %1").arg(path));
    return {};
}

QString exportFilter() {
    return QObject::tr("PNG image (*.png);;SVG vector (*.svg);;PDF document (*.pdf);;"
                       "CSV data (*.csv);;NumPy data (*.npy);;JSON data (*.json)");
}

QImage renderFigure(View& view, const QSize& size, double scale) {
    view.ensureComplete();
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

Status exportView(View& view, const QString& path, const QSize& size, double scale) {
    FigureOptions options;
    options.size = size;
    options.scale = scale;
    return exportView(view, path, options);
}

Status exportView(View& view, const QString& path, const FigureOptions& options) {
    ExportFormat format;
    if (!exportFormatFor(path, &format))
        return exportError(
            QObject::tr("%1: unknown file type (use .png, .svg, .pdf, .csv, .npy or .json)")
                .arg(path));
    if (!isFigureFormat(format)) return exportData(view, path);
    QSize size = options.size;
    const double scale = options.scale;
    if (size.width() <= 0 || size.height() <= 0 || !(scale > 0))
        return exportError(QObject::tr("%1: the figure size must be positive").arg(path));
    FigureStyle style = options.style;
    if (style.wrapWidth <= 0) style.wrapWidth = size.width();
    const StyleScope scope(view, style);
    if (options.fitHeight)
        if (const int fitted = view.fittedFigureHeight(size.width()); fitted > 0)
            size.setHeight(fitted);
    switch (format) {
    case ExportFormat::Png: {
        const QImage image = renderFigure(view, size, scale);
        QSaveFile file(path);
        if (!file.open(QIODevice::WriteOnly) || !image.save(&file, "PNG") || !file.commit())
            return exportError(QObject::tr("Cannot write %1").arg(path));
        return {};
    }
    case ExportFormat::Svg: {
        QBuffer svg;
        svg.open(QIODevice::WriteOnly);
        {
            QSvgGenerator generator;
            generator.setOutputDevice(&svg);
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
        QSaveFile file(path);
        if (!file.open(QIODevice::WriteOnly) || file.write(cssFontFamilies(svg.data())) < 0 ||
            !file.commit())
            return exportError(QObject::tr("Cannot write %1").arg(path));
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
            if (!painter.begin(&writer))
                return exportError(QObject::tr("Cannot write %1").arg(path));
            painter.setMode(QCPPainter::pmVectorized);
            painter.setMode(QCPPainter::pmNoCaching);
            painter.fillRect(QRect(QPoint(0, 0), size), view.theme().background);
            view.paintFigure(painter, size);
            painter.end();
        }
        return publishPdf(temporary, path);
    }
    default:
        break;
    }
    return {};
}

void copyFigureToClipboard(View& view, const QSize& size) {
    if (QClipboard* clipboard = QGuiApplication::clipboard())
        clipboard->setImage(renderFigure(view, size, 2.0));
}

} // namespace attnlab::ui
