#include "ui/state/dump_document.h"

#include <QFileInfo>
#include <QtConcurrent/QtConcurrentMap>

#include <algorithm>
#include <atomic>
#include <exception>
#include <numeric>

#include "ui/state/document.h"
#include "ui/state/latest_task.h"

#include "attnlab/attention/kv_cache.h"
#include "attnlab/attention/rope.h"

namespace attnlab::ui {

DumpDocument::DumpDocument(Document* document)
    : QObject(document), m_document(document),
      m_layerTask(std::make_unique<LatestTask<std::shared_ptr<Experiment>>>(
          this, [this](Result<std::shared_ptr<Experiment>> result) {
              if (!result) {
                  fail(QString::fromStdString(result.error()));
                  return;
              }
              // Shown only while nothing changed since it was asked for.
              if (m_changes != m_layerChanges || (*result)->source.layer != m_layer) return;
              // Moved out of the shared object: nothing reads the future's copy again.
              m_document->setExternalExperiment(std::move(**result));
          })) {
    setObjectName(QStringLiteral("DumpDocument"));
    m_layerTask->onBusyChanged([this](bool busy) { emit layerPendingChanged(busy); });
    m_thumbnailTask =
        std::make_unique<LatestTask<Thumbnails>>(this, [this](Result<Thumbnails> done) {
            if (!done || !m_thumbnailsOf || done->key != *m_thumbnailsOf)
                return; // asked again since
            m_thumbnails = std::move(done->images);
            emit thumbnailsChanged();
        });
    // First of the slots: whatever is made after a change is of the new dump.
    connect(this, &DumpDocument::dumpChanged, this, [this] {
        ++m_dumpSerial;
        m_thumbnailTask->stop();
        m_thumbnails.clear();
        m_thumbnailsOf.reset();
    });
}

DumpDocument::~DumpDocument() = default;

bool DumpDocument::layerPending() const {
    return m_layerTask->busy();
}

void DumpDocument::waitForLayer() {
    m_layerTask->wait();
}

DumpDocument* DumpDocument::of(Document* document) {
    if (auto* existing = document->findChild<DumpDocument*>(QString(), Qt::FindDirectChildrenOnly))
        return existing;
    return new DumpDocument(document);
}

bool DumpDocument::active() const {
    return m_dump && m_document->hasExternalExperiment();
}

void DumpDocument::setAttentionKind(const QString& kind) {
    if (!m_dump || m_dump->kind.empty() || kind.toStdString() == m_dump->kind) return;
    if (m_origin.kind == ExperimentSource::Kind::Model) {
        emit attentionKindRequested(kind);
        return;
    }
    openAttention(QString::fromStdString(m_dump->source), {}, m_batch, kind);
}

QString DumpDocument::displayName() const {
    if (!m_dump) return {};
    return QFileInfo(QString::fromStdString(m_dump->source)).fileName();
}

void DumpDocument::fail(const QString& message) {
    emit errorOccurred(message);
    emit m_document->errorOccurred(message);
}

bool DumpDocument::openAttention(const QString& path, const QString& tokensPath, Index batch,
                                 const QString& kind) {
    // Whatever the file holds is one message, never an abort; a refused file changes nothing.
    try {
        Result<AttentionDump> loaded =
            loadAttentionDump(path.toStdString(), tokensPath.toStdString(), kind.toStdString());
        if (!loaded) {
            fail(QString::fromStdString(loaded.error()));
            return false;
        }
        if (batch < 0 || batch >= loaded->batch) {
            fail(tr("%1: batch %2 is outside 0..%3").arg(path).arg(batch).arg(loaded->batch - 1));
            return false;
        }
        showAttention(std::move(*loaded), batch);
    } catch (const std::exception& error) {
        fail(QStringLiteral("%1: %2").arg(path, QString::fromUtf8(error.what())));
        return false;
    }
    for (const std::string& warning : m_dump->warnings)
        emit m_document->errorOccurred(QString::fromStdString(warning));
    return true;
}

void DumpDocument::showAttention(AttentionDump dump, Index batch, const QkvOrigin& origin,
                                 Index layer) {
    ATTN_CHECK(batch >= 0 && batch < dump.batch,
               "batch " << batch << " outside [0, " << dump.batch << ")");
    m_dump = std::make_shared<const AttentionDump>(std::move(dump));
    m_qkv.reset();
    m_origin = origin;
    m_comparison.reset();
    m_batch = batch;
    m_layer = std::clamp<Index>(layer, 0, m_dump->layers - 1);
    m_tableValid = false;
    ++m_changes;
    showLayer();
    emit dumpChanged();
}

AttentionDump DumpDocument::runAllLayers(std::shared_ptr<const QkvDump> qkv, QkvApply apply) {
    apply.spec.threads = 0;
    return appliedDump(std::move(qkv), apply);
}

bool DumpDocument::openQkv(const QString& path, const QString& tokensPath) {
    // Whatever the file holds is one message, never an abort; a refused file changes nothing.
    QkvApply apply = m_apply;
    try {
        Result<QkvDump> loaded = loadQkvDump(path.toStdString(), tokensPath.toStdString());
        if (!loaded) {
            fail(QString::fromStdString(loaded.error()));
            return false;
        }
        if (apply.kvHeads > 0 && loaded->kvHeads % apply.kvHeads != 0) apply.kvHeads = 0;
        auto qkv = std::make_shared<const QkvDump>(std::move(*loaded));
        AttentionDump weights = runAllLayers(qkv, apply);
        m_qkv = std::move(qkv);
        m_origin = QkvOrigin{};
        m_dump = std::make_shared<const AttentionDump>(std::move(weights));
        m_apply = apply;
        m_comparison.reset();
        m_batch = 0;
        m_layer = 0;
        m_tableValid = false;
        ++m_changes;
        showLayer();
    } catch (const std::exception& error) {
        fail(QStringLiteral("%1: %2").arg(path, QString::fromUtf8(error.what())));
        return false;
    }
    emit dumpChanged();
    return true;
}

void DumpDocument::showQkv(QkvDump qkv, const QkvApply& apply, std::optional<AttentionDump> weights,
                           Index layer, const QkvOrigin& origin,
                           std::optional<Experiment> shownLayer) {
    auto shared = std::make_shared<const QkvDump>(std::move(qkv));
    AttentionDump shown = weights ? std::move(*weights) : runAllLayers(shared, apply);
    ATTN_CHECK(shown.layers == shared->layers && shown.heads == shared->heads &&
                   shown.sq == shared->sq && shown.sk == shared->sk,
               "the weights shown must have the Q/K/V's shape");
    if (m_comparison &&
        (m_comparison->layers != shown.layers || m_comparison->heads != shown.heads ||
         m_comparison->sq != shown.sq || m_comparison->sk != shown.sk))
        m_comparison.reset();
    m_qkv = std::move(shared);
    m_dump = std::make_shared<const AttentionDump>(std::move(shown));
    m_apply = apply;
    m_origin = origin;
    m_batch = 0;
    m_layer = std::clamp<Index>(layer, 0, std::max<Index>(0, m_dump->layers - 1));
    m_tableValid = false;
    ++m_changes;
    if (shownLayer && m_layer == layer) {
        m_layerTask->stop(); // computed ahead: supersedes a layer being computed
        m_document->setExternalExperiment(std::move(*shownLayer));
    } else {
        showLayer();
    }
    emit dumpChanged();
}

bool DumpDocument::setQkvApply(const QkvApply& apply) {
    if (!m_qkv) {
        m_apply = apply;
        return true;
    }
    try {
        AttentionDump weights = runAllLayers(m_qkv, apply);
        m_dump = std::make_shared<const AttentionDump>(std::move(weights));
    } catch (const std::exception& error) {
        fail(QString::fromUtf8(error.what()));
        return false;
    }
    m_apply = apply;
    m_tableValid = false;
    ++m_changes;
    showLayer();
    emit dumpChanged();
    return true;
}

bool DumpDocument::openComparison(const QString& path) {
    if (!m_dump) {
        fail(tr("Open a dump first; the second dump is compared with it."));
        return false;
    }
    Result<AttentionDump> loaded = loadAttentionDump(path.toStdString());
    if (!loaded) {
        fail(QString::fromStdString(loaded.error()));
        return false;
    }
    if (loaded->layers != m_dump->layers || loaded->heads != m_dump->heads ||
        loaded->sq != m_dump->sq || loaded->sk != m_dump->sk) {
        fail(tr("%1: shape [%2, %3, %4, %5] differs from the open dump's [%6, %7, %8, %9]")
                 .arg(path)
                 .arg(loaded->layers)
                 .arg(loaded->heads)
                 .arg(loaded->sq)
                 .arg(loaded->sk)
                 .arg(m_dump->layers)
                 .arg(m_dump->heads)
                 .arg(m_dump->sq)
                 .arg(m_dump->sk));
        return false;
    }
    m_comparison = std::move(*loaded);
    emit dumpChanged();
    return true;
}

Experiment qkvLayerExperiment(const QkvDump& qkv, Index layer, const QkvApply& apply,
                              const QkvOrigin& origin) {
    QkvApply run = apply;
    // A model's layer holds no H x S x S: a view computes a head's weights and q.k when it
    // shows them.
    if (origin.kind == ExperimentSource::Kind::Model) {
        run.keepScores = false;
        run.weightsOnDemand = true;
    }
    // A layer of a long text is large work: every core (the same bytes at any count).
    run.spec.threads = 0;
    Experiment experiment = applyToQkvLayer(qkv, layer, run);
    experiment.source.kind = origin.kind;
    experiment.positional = origin.positional;
    experiment.ropeBase = origin.ropeBase;
    experiment.milliseconds = origin.milliseconds;
    const MaskSpec& mask = apply.spec.mask;
    const bool causalSoftmax =
        (apply.spec.variant == Variant::Softmax || apply.spec.variant == Variant::Flash) &&
        (mask.causal || mask.causalWindow >= 0);
    if (origin.kvPrefill >= 0 && causalSoftmax && experiment.sq() == experiment.sk()) {
        // The KV-cache steps of this layer's own q/k/v: the weights a cache gives equal the
        // full run's (kv_cache_test.cpp), so only the steps are added.
        const Qkv& layerQkv = experiment.qkv;
        KvCacheTrace trace = kvCacheTrace(1, layerQkv.k.heads, layerQkv.q.seq,
                                          std::min<Index>(origin.kvPrefill, layerQkv.q.seq),
                                          layerQkv.k.dim, layerQkv.v.dim, 4);
        experiment.kvPrefill = trace.prefill;
        experiment.kvTrace = std::move(trace);
    }
    return experiment;
}

void DumpDocument::showLayer() {
    m_layerTask->stop(); // a layer shown now supersedes one being computed
    if (!m_dump) return;
    Experiment experiment;
    if (m_qkv) {
        experiment = qkvLayerExperiment(*m_qkv, m_layer, m_apply, m_origin);
    } else {
        experiment = dumpExperiment(*m_dump, m_batch, m_layer);
        if (m_origin.kind == ExperimentSource::Kind::Model) {
            // A translation model's run, shown as its attention: the model's own weights. Its
            // decoder attends causally (the caption says so; the cells above the diagonal are
            // masked, not weights of 0).
            experiment.source.kind = m_origin.kind;
            experiment.milliseconds = m_origin.milliseconds;
            if (experiment.source.attention == "decoder") experiment.mask.causal = true;
        }
    }
    m_document->setExternalExperiment(std::move(experiment));
}

void DumpDocument::setBatch(Index batch) {
    if (!m_dump || batch == m_batch || batch < 0 || batch >= m_dump->batch) return;
    m_batch = batch;
    m_tableValid = false;
    ++m_changes;
    showLayer();
    emit dumpChanged();
}

void DumpDocument::setLayer(Index layer) {
    if (!m_dump) return;
    layer = std::clamp<Index>(layer, 0, m_dump->layers - 1);
    if (layer == m_layer && active() && !layerPending()) return;
    m_layer = layer;
    const double cells = static_cast<double>(m_dump->heads) * static_cast<double>(m_dump->sq) *
                         static_cast<double>(m_dump->sk);
    if (m_qkv && active() && cells > m_inlineLayerCells) {
        // On the worker; a change meanwhile (another run, spec or layer) drops the result.
        m_layerChanges = m_changes;
        m_layerTask->start([qkv = m_qkv, apply = m_apply, origin = m_origin,
                            layer](const std::atomic<bool>*) -> Result<std::shared_ptr<Experiment>> {
            return std::make_shared<Experiment>(qkvLayerExperiment(*qkv, layer, apply, origin));
        });
    } else {
        showLayer();
    }
    emit layerChanged();
}

void DumpDocument::focus(Index layer, Index head) {
    setLayer(layer);
    m_document->setFocusedHead(head);
}

const std::vector<HeadSummary>& DumpDocument::headTable() {
    if (!m_tableValid) {
        m_table = m_dump ? headStatisticsTable(*m_dump, m_batch, 0) : std::vector<HeadSummary>{};
        m_tableValid = true;
    }
    return m_table;
}

std::vector<double> ropeFrequencies(Document* document, const Experiment& experiment) {
    const Index pairs = experiment.qkv.q.dim / 2;
    const DumpDocument* dumps = DumpDocument::of(document);
    if (!experiment.source.isSession() && dumps->active() &&
        static_cast<Index>(dumps->origin().ropeFrequencies.size()) == pairs)
        return dumps->origin().ropeFrequencies;
    const Matrix angles = ropeAngles(2, 2 * pairs, experiment.ropeBase, 0);
    std::vector<double> out(static_cast<std::size_t>(pairs));
    for (Index t = 0; t < pairs; ++t)
        out[static_cast<std::size_t>(t)] = static_cast<double>(angles(1, t)); // position 1
    return out;
}

namespace {

/// One thumbnail: the [Sq, Sk] weights block-averaged to at most `pixels` per side, scaled to
/// the matrix's own maximum, through a 256-entry colour table.
QImage makeThumbnail(const Matrix& weights, int pixels, const std::vector<QRgb>& table) {
    const Index sq = weights.rows();
    const Index sk = weights.cols();
    const int rows = static_cast<int>(std::min<Index>(sq, pixels));
    const int cols = static_cast<int>(std::min<Index>(sk, pixels));
    std::vector<float> sums(static_cast<std::size_t>(rows) * cols, 0.0f);
    std::vector<int> rowCount(static_cast<std::size_t>(rows), 0);
    std::vector<int> colOf(static_cast<std::size_t>(sk));
    std::vector<int> colCount(static_cast<std::size_t>(cols), 0);
    for (Index j = 0; j < sk; ++j) {
        colOf[static_cast<std::size_t>(j)] = static_cast<int>(j * cols / sk);
        ++colCount[static_cast<std::size_t>(colOf[static_cast<std::size_t>(j)])];
    }
    for (Index i = 0; i < sq; ++i) {
        const int y = static_cast<int>(i * rows / sq);
        ++rowCount[static_cast<std::size_t>(y)];
        float* out = sums.data() + static_cast<std::size_t>(y) * cols;
        const float* in = weights.data() + i * sk;
        for (Index j = 0; j < sk; ++j)
            out[colOf[static_cast<std::size_t>(j)]] += in[j];
    }
    float highest = 0;
    for (int y = 0; y < rows; ++y)
        for (int x = 0; x < cols; ++x) {
            float& cell = sums[static_cast<std::size_t>(y) * cols + x];
            cell /= static_cast<float>(rowCount[static_cast<std::size_t>(y)] *
                                       colCount[static_cast<std::size_t>(x)]);
            highest = std::max(highest, cell);
        }
    QImage image(cols, rows, QImage::Format_RGB32);
    const float toIndex = highest > 0 ? 255.0f / highest : 0.0f;
    for (int y = 0; y < rows; ++y) {
        auto* line = reinterpret_cast<QRgb*>(image.scanLine(y));
        for (int x = 0; x < cols; ++x) {
            const float v = sums[static_cast<std::size_t>(y) * cols + x] * toIndex;
            line[x] = table[static_cast<std::size_t>(std::clamp(static_cast<int>(v), 0, 255))];
        }
    }
    return image;
}

} // namespace

void DumpDocument::requestThumbnails(const std::vector<QRgb>& table, int pixels) {
    ThumbnailKey key{m_dumpSerial, table, pixels};
    if (m_thumbnailsOf == key) return; // shown, or in flight
    m_thumbnailsOf = key;
    m_thumbnails.clear();
    const std::shared_ptr<const AttentionDump> dump = m_dump;
    if (!dump) return;
    const Index batch = m_batch;
    const Index heads = dump->heads;
    const auto count = static_cast<int>(dump->layers * heads);
    // Every head's map, one alive per worker thread: a model's run computes each.
    auto make = [dump, batch, heads, count, key](const std::atomic<bool>* cancel) {
        std::vector<QImage> images(static_cast<std::size_t>(count));
        std::vector<int> indices(images.size());
        std::iota(indices.begin(), indices.end(), 0);
        QtConcurrent::blockingMap(indices, [&](int n) {
            if (cancel && cancel->load()) return;
            images[static_cast<std::size_t>(n)] =
                makeThumbnail(dump->head(batch, n / heads, n % heads), key.pixels, key.table);
        });
        return images;
    };
    const double cells =
        static_cast<double>(count) * static_cast<double>(dump->sq) * static_cast<double>(dump->sk);
    if (dump->holdsWeights() || cells <= kInlineThumbnailCells) {
        m_thumbnails = make(nullptr);
        return;
    }
    m_thumbnailTask->start([make, key](const std::atomic<bool>* cancel) -> Result<Thumbnails> {
        Thumbnails out{make(cancel), key};
        if (cancel->load()) return Error{"cancelled"};
        return out;
    });
}

bool DumpDocument::thumbnailsComputing() const {
    return m_thumbnailTask->busy();
}

void DumpDocument::waitForThumbnails() {
    m_thumbnailTask->wait();
}

} // namespace attnlab::ui
