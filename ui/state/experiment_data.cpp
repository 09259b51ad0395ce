#include "ui/state/experiment_data.h"

#include <QObject>

#include <algorithm>

namespace attnlab::ui {

QString displayToken(const std::string& token) {
    QString text = QString::fromStdString(token);
    text.replace(QStringLiteral("<0x0A>"), QStringLiteral("\n"));
    text.replace(QStringLiteral("<0x09>"), QStringLiteral("\t"));
    text.replace(QStringLiteral("\r\n"), QStringLiteral("\n"));
    QString out;
    out.reserve(text.size());
    for (const QChar c : text) {
        switch (c.unicode()) {
        case 0x0120: // byte-level BPE: the space byte
        case 0x2581: // sentencepiece: the word-start marker
            out += QLatin1Char(' ');
            break;
        case 0x010a: // byte-level BPE: the newline byte
        case '\n':
        case '\r':
            out += QChar(0x23ce);
            break;
        case 0x0109: // byte-level BPE: the tab byte
        case '\t':
            out += QChar(0x2192);
            break;
        default:
            out += c;
        }
    }
    if (out.trimmed().isEmpty()) return QString(out.size() <= 1 ? 1 : out.size(), QChar(0x2423));
    return out;
}

QStringList displayTokens(const std::vector<std::string>& tokens) {
    QStringList out;
    out.reserve(static_cast<int>(tokens.size()));
    for (const std::string& token : tokens)
        out << displayToken(token);
    return out;
}

QStringList rawTokens(const std::vector<std::string>& tokens) {
    QStringList out;
    out.reserve(static_cast<int>(tokens.size()));
    for (const std::string& token : tokens)
        out << QString::fromStdString(token);
    return out;
}

namespace {

QString maskCaption(const MaskSpec& mask) {
    QStringList parts;
    if (mask.causal) parts << QObject::tr("causal");
    if (mask.window >= 0) parts << QObject::tr("window %1").arg(mask.window);
    // The window as a model's sliding_window states it: the keys a query sees, itself included
    // (the mask's causalWindow counts the earlier ones: 0 <= p - j <= causalWindow).
    if (mask.causalWindow == 0)
        parts << QObject::tr("causal window of 1 key");
    else if (mask.causalWindow > 0)
        parts << QObject::tr("causal window of %1 keys").arg(mask.causalWindow + 1);
    if (!mask.validLen.empty())
        parts << QObject::tr("padding (first %1 keys)").arg(mask.validLen.front());
    if (mask.custom) parts << QObject::tr("custom");
    if (parts.isEmpty()) return QObject::tr("no mask");
    return QObject::tr("%1 mask").arg(parts.join(QStringLiteral(" + ")));
}

/// The variant as a caption names it, in the reader's language.
QString variantCaption(Variant variant) {
    switch (variant) {
    case Variant::Softmax:
        return QObject::tr("softmax");
    case Variant::Flash:
        return QObject::tr("flash");
    case Variant::Linear:
        return QObject::tr("linear");
    case Variant::Additive:
        return QObject::tr("additive");
    }
    return QString::fromUtf8(variantName(variant));
}

} // namespace

QString describeSource(const ExperimentSource& source) {
    if (source.kind == ExperimentSource::Kind::Session)
        return source.name.empty() ? QObject::tr("session") : QString::fromStdString(source.name);
    QString text = QString::fromStdString(source.name);
    if (source.attention == "cross")
        text = QObject::tr("%1, cross-attention").arg(text);
    else if (source.attention == "encoder")
        text = QObject::tr("%1, encoder self-attention").arg(text);
    else if (source.attention == "decoder")
        text = QObject::tr("%1, decoder self-attention").arg(text);
    if (source.layer >= 0) text = QObject::tr("%1, layer %2").arg(text).arg(source.layer);
    if (source.batch >= 0) text = QObject::tr("%1, batch %2").arg(text).arg(source.batch);
    if (source.head >= 0) text = QObject::tr("%1, head %2").arg(text).arg(source.head);
    return text;
}

QString figureCaption(const Experiment& experiment, Index head) {
    QStringList parts;
    const ExperimentSource& source = experiment.source;
    if (source.isSession()) {
        parts << (experiment.session.identityProjections
                      ? QObject::tr("identity projections")
                      : QObject::tr("random projections (seed %1)").arg(experiment.session.seed));
    } else {
        parts << describeSource(source);
    }
    // Sources whose weights were computed here (a model's q/k re-run included) name the
    // variant and mask they ran under.
    const bool lab = source.isSession() || source.kind == ExperimentSource::Kind::QkvDump ||
                     source.kind == ExperimentSource::Kind::Model;
    if (lab) {
        parts << variantCaption(experiment.variant);
        parts << maskCaption(experiment.mask);
    }
    const Index heads =
        experiment.headCount() > 0 ? experiment.headCount() : experiment.weightHeads();
    const Index kvHeads = experiment.kvHeadCount();
    QString headText = QObject::tr("head %1 of %2").arg(clampedHead(experiment, head)).arg(heads);
    if (lab && kvHeads > 0 && kvHeads < heads)
        headText += QObject::tr(" (kv heads: %1)").arg(kvHeads);
    parts << headText;
    return parts.join(QStringLiteral(", "));
}

Index clampedHead(const Experiment& experiment, Index head) {
    const Index heads = experiment.weightHeads();
    if (heads <= 0) return 0;
    return std::clamp<Index>(head, 0, heads - 1);
}

MatrixD headSlice(const Tensor4& tensor, Index head) {
    if (tensor.empty() || tensor.batch < 1 || head < 0 || head >= tensor.heads)
        return MatrixD(0, 0);
    return tensor.head(0, head).cast<double>();
}

MatrixD headWeights(const Experiment& experiment, Index head) {
    if (!experiment.maps)
        return headSlice(experiment.attention.weights, clampedHead(experiment, head));
    return experiment.headWeights(clampedHead(experiment, head)).cast<double>();
}

BoolMatrix maskedCells(const Experiment& experiment) {
    const Index sq = experiment.sq();
    const Index sk = experiment.sk();
    BoolMatrix allowedCells = denseMask(maskFor(experiment.mask, sq, sk), 0, sq, sk);
    return allowedCells.array() == false;
}

} // namespace attnlab::ui
