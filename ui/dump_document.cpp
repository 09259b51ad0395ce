#include "ui/dump_document.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QMainWindow>
#include <QMenu>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QToolBar>

#include <algorithm>
#include <exception>

#include "ui/document.h"

namespace attnlab::ui {

DumpDocument::DumpDocument(Document* document) : QObject(document), m_document(document) {
    setObjectName(QStringLiteral("DumpDocument"));
}

DumpDocument* DumpDocument::of(Document* document) {
    if (auto* existing = document->findChild<DumpDocument*>(QString(), Qt::FindDirectChildrenOnly))
        return existing;
    return new DumpDocument(document);
}

bool DumpDocument::active() const {
    return m_dump && m_document->hasExternalExperiment();
}

QString DumpDocument::displayName() const {
    if (!m_dump) return {};
    return QFileInfo(QString::fromStdString(m_dump->source)).fileName();
}

void DumpDocument::fail(const QString& message) {
    emit errorOccurred(message);
    emit m_document->errorOccurred(message);
}

bool DumpDocument::openAttention(const QString& path, const QString& tokensPath, Index batch) {
    // Whatever the file holds is one message, never an abort; a refused file changes nothing.
    try {
        Result<AttentionDump> loaded =
            loadAttentionDump(path.toStdString(), tokensPath.toStdString());
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

void DumpDocument::showAttention(AttentionDump dump, Index batch) {
    ATTN_CHECK(batch >= 0 && batch < dump.batch,
               "batch " << batch << " outside [0, " << dump.batch << ")");
    m_dump = std::move(dump);
    m_qkv.reset();
    m_comparison.reset();
    m_batch = batch;
    m_layer = 0;
    m_tableValid = false;
    showLayer();
    emit dumpChanged();
}

AttentionDump DumpDocument::runAllLayers(const QkvDump& qkv, const QkvApply& apply) {
    AttentionDump out;
    out.source = qkv.source;
    out.batch = 1;
    out.layers = qkv.layers;
    out.heads = qkv.heads;
    out.sq = qkv.sq;
    out.sk = qkv.sk;
    out.tokens = qkv.tokens;
    out.weights.resize(static_cast<std::size_t>(out.layers * out.heads * out.sq * out.sk));
    QkvApply fast = apply;
    fast.spec.threads = 0;
    for (Index l = 0; l < qkv.layers; ++l) {
        const Experiment ex = applyToQkvLayer(qkv, l, fast);
        std::copy(ex.attention.weights.data.begin(), ex.attention.weights.data.end(),
                  out.weights.begin() + l * out.heads * out.sq * out.sk);
    }
    return out;
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
        AttentionDump weights = runAllLayers(*loaded, apply);
        m_qkv = std::move(*loaded);
        m_dump = std::move(weights);
        m_apply = apply;
        m_comparison.reset();
        m_batch = 0;
        m_layer = 0;
        m_tableValid = false;
        showLayer();
    } catch (const std::exception& error) {
        fail(QStringLiteral("%1: %2").arg(path, QString::fromUtf8(error.what())));
        return false;
    }
    emit dumpChanged();
    return true;
}

bool DumpDocument::setQkvApply(const QkvApply& apply) {
    if (!m_qkv) {
        m_apply = apply;
        return true;
    }
    try {
        AttentionDump weights = runAllLayers(*m_qkv, apply);
        m_dump = std::move(weights);
    } catch (const std::exception& error) {
        fail(QString::fromUtf8(error.what()));
        return false;
    }
    m_apply = apply;
    m_tableValid = false;
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

void DumpDocument::showLayer() {
    if (!m_dump) return;
    Experiment experiment;
    if (m_qkv) {
        experiment = applyToQkvLayer(*m_qkv, m_layer, m_apply);
    } else {
        experiment = dumpExperiment(*m_dump, m_batch, m_layer);
    }
    m_document->setExternalExperiment(std::move(experiment));
}

void DumpDocument::setBatch(Index batch) {
    if (!m_dump || batch == m_batch || batch < 0 || batch >= m_dump->batch) return;
    m_batch = batch;
    m_tableValid = false;
    showLayer();
    emit dumpChanged();
}

void DumpDocument::setLayer(Index layer) {
    if (!m_dump) return;
    layer = std::clamp<Index>(layer, 0, m_dump->layers - 1);
    if (layer == m_layer && active()) return;
    m_layer = layer;
    showLayer();
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

// ---------------------------------------------------------------------------------------------

void installDumpControls(QMainWindow* window, QMenu* fileMenu, Document* document) {
    DumpDocument* dumps = DumpDocument::of(document);
    QMenu* menu = fileMenu;
    auto askTokens = [window](const QString& path) {
        // Tokens beside the dump (same name, .json or .txt) are picked up without asking.
        const QFileInfo info(path);
        for (const char* ext : {".tokens.json", ".tokens.txt"}) {
            const QString candidate =
                info.dir().filePath(info.completeBaseName() + QLatin1String(ext));
            if (QFileInfo::exists(candidate)) return candidate;
        }
        Q_UNUSED(window);
        return QString();
    };
    QAction* openAttention = menu->addAction(
        QObject::tr("Open Attention &Dump\u2026"), window, [window, dumps, askTokens] {
            const QString path =
                QFileDialog::getOpenFileName(window, QObject::tr("Open attention dump"), QString(),
                                             QObject::tr("Attention dumps (*.npz *.npy)"));
            if (path.isEmpty()) return;
            if (!dumps->openAttention(path, askTokens(path))) return;
            // A 5-D dump asks which batch entry to show (read once, batch 0 shown meanwhile).
            if (const AttentionDump* dump = dumps->dump(); dump && dump->batch > 1) {
                bool ok = false;
                const int batch = QInputDialog::getInt(
                    window, QObject::tr("Batch entry"),
                    QObject::tr("The dump holds %1 sequences; show which (0..%2)?")
                        .arg(dump->batch)
                        .arg(dump->batch - 1),
                    0, 0, static_cast<int>(dump->batch - 1), 1, &ok);
                if (ok) dumps->setBatch(batch);
            }
            if (dumps->active()) {
                ViewState state = dumps->document()->session().viewState;
                state.view = "model";
                dumps->document()->setViewState(state);
            }
        });
    openAttention->setToolTip(QObject::tr("Attention weights of a real model: .npy or .npz of "
                                          "shape [S,S], [H,S,S], [L,H,S,S] or [B,L,H,S,S]"));
    QAction* openQkv =
        menu->addAction(QObject::tr("Open &Q/K/V Dump\u2026"), window, [window, dumps, askTokens] {
            const QString path =
                QFileDialog::getOpenFileName(window, QObject::tr("Open Q/K/V dump"), QString(),
                                             QObject::tr("Q/K/V dumps (*.npz)"));
            if (path.isEmpty()) return;
            if (dumps->openQkv(path, askTokens(path))) {
                ViewState state = dumps->document()->session().viewState;
                state.view = "model";
                dumps->document()->setViewState(state);
            }
        });
    openQkv->setToolTip(QObject::tr("Q, K, V of a real model (.npz with q, k, v): re-run any "
                                    "layer under another variant, mask or GQA sharing"));
    menu->addAction(QObject::tr("Open Second Dump for Difference\u2026"), window, [window, dumps] {
        const QString path =
            QFileDialog::getOpenFileName(window, QObject::tr("Open second attention dump"),
                                         QString(), QObject::tr("Attention dumps (*.npz *.npy)"));
        if (!path.isEmpty()) dumps->openComparison(path);
    });

    QToolBar* bar = window->addToolBar(QObject::tr("Model"));
    bar->setObjectName(QStringLiteral("ModelToolBar"));
    auto* name = new QLabel(bar);
    bar->addWidget(name);
    auto* batchLabel = new QLabel(QObject::tr(" Batch "), bar);
    auto* batch = new QSpinBox(bar);
    batch->setToolTip(QObject::tr("Which sequence of a batched [B, L, H, S, S] dump"));
    auto* layerLabel = new QLabel(QObject::tr(" Layer "), bar);
    auto* layer = new QSpinBox(bar);
    layer->setToolTip(QObject::tr("The layer the heatmap, heads, entropy and statistics show"));
    QAction* batchActions[] = {bar->addWidget(batchLabel), bar->addWidget(batch)};
    bar->addWidget(layerLabel);
    bar->addWidget(layer);
    auto* variantLabel = new QLabel(QObject::tr(" Re-run as "), bar);
    auto* variant = new QComboBox(bar);
    for (Variant v : {Variant::Softmax, Variant::Linear, Variant::Additive})
        variant->addItem(QString::fromUtf8(variantName(v)), static_cast<int>(v));
    auto* mask = new QComboBox(bar);
    mask->addItem(QObject::tr("no mask"), 0);
    mask->addItem(QObject::tr("causal"), 1);
    mask->addItem(QObject::tr("window"), 2);
    mask->addItem(QObject::tr("causal window"), 3);
    auto* window_ = new QSpinBox(bar);
    window_->setRange(0, 1 << 20);
    window_->setValue(4);
    window_->setPrefix(QObject::tr("W="));
    auto* kv = new QSpinBox(bar);
    kv->setPrefix(QObject::tr("kv heads "));
    kv->setToolTip(QObject::tr("GQA sharing: fewer kv heads mean-pool K and V in groups"));
    std::vector<QAction*> qkvActions = {bar->addWidget(variantLabel), bar->addWidget(variant),
                                        bar->addWidget(mask), bar->addWidget(window_),
                                        bar->addWidget(kv)};

    auto sync = [=] {
        const AttentionDump* dump = dumps->dump();
        const bool shown = dumps->active();
        bar->setEnabled(shown);
        name->setText(shown ? QObject::tr(" %1 ").arg(dumps->displayName())
                            : QObject::tr(" No model dump "));
        for (QAction* a : batchActions)
            a->setVisible(shown && dump->batch > 1);
        for (QAction* a : qkvActions)
            a->setVisible(shown && dumps->qkvDump());
        if (!dump) return;
        const QSignalBlocker b1(batch), b2(layer), b3(kv);
        batch->setRange(0, static_cast<int>(dump->batch - 1));
        batch->setValue(static_cast<int>(dumps->batch()));
        layer->setRange(0, static_cast<int>(dump->layers - 1));
        layer->setValue(static_cast<int>(dumps->layer()));
        if (const QkvDump* qkv = dumps->qkvDump()) {
            kv->setRange(1, static_cast<int>(qkv->kvHeads));
            kv->setValue(static_cast<int>(dumps->qkvApply().kvHeads > 0 ? dumps->qkvApply().kvHeads
                                                                        : qkv->kvHeads));
        }
    };
    auto applySpec = [=] {
        QkvApply apply = dumps->qkvApply();
        apply.spec.variant = static_cast<Variant>(variant->currentData().toInt());
        apply.spec.mask = MaskSpec{};
        const int kind = mask->currentData().toInt();
        apply.spec.mask.causal = kind == 1;
        if (kind == 2) apply.spec.mask.window = window_->value();
        if (kind == 3) apply.spec.mask.causalWindow = window_->value();
        const QkvDump* qkv = dumps->qkvDump();
        apply.kvHeads = qkv && kv->value() < qkv->kvHeads ? kv->value() : 0;
        dumps->setQkvApply(apply);
    };
    QObject::connect(dumps, &DumpDocument::dumpChanged, bar, sync);
    QObject::connect(dumps, &DumpDocument::layerChanged, bar, sync);
    QObject::connect(document, &Document::changed, bar, [sync](Document::What what) {
        if (what == Document::What::Experiment || what == Document::What::Session) sync();
    });
    QObject::connect(batch, &QSpinBox::valueChanged, bar,
                     [dumps](int value) { dumps->setBatch(value); });
    QObject::connect(layer, &QSpinBox::valueChanged, bar,
                     [dumps](int value) { dumps->setLayer(value); });
    QObject::connect(variant, &QComboBox::activated, bar, applySpec);
    QObject::connect(mask, &QComboBox::activated, bar, applySpec);
    QObject::connect(window_, &QSpinBox::editingFinished, bar, applySpec);
    QObject::connect(kv, &QSpinBox::valueChanged, bar, applySpec);
    sync();
}

} // namespace attnlab::ui
