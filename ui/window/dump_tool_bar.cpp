#include "ui/window/dump_tool_bar.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QMainWindow>
#include <QStatusBar>
#include <QMenu>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QToolBar>

#include <algorithm>
#include <vector>

#include "ui/state/document.h"
#include "ui/state/dump_document.h"

namespace attnlab::ui {

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
    // A translation model's three attentions.
    auto* attention = new QComboBox(bar);
    attention->addItem(QObject::tr("cross-attention (target reads source)"), QStringLiteral("cross"));
    attention->addItem(QObject::tr("encoder self-attention (source)"), QStringLiteral("encoder"));
    attention->addItem(QObject::tr("decoder self-attention (target)"), QStringLiteral("decoder"));
    attention->setToolTip(QObject::tr("Which attention of the translation model the views show: "
                                      "cross-attention's queries come from the target, its keys "
                                      "and values from the source"));
    QAction* attentionAction = bar->addWidget(attention);
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
        // Only while a dump is shown: an empty bar took the room of the display's controls
        // (the projector's font put Head, Colours and Theme behind the extension).
        bar->setVisible(shown);
        bar->setEnabled(shown);
        name->setText(shown ? QObject::tr(" %1 ").arg(dumps->displayName())
                            : QObject::tr(" No model dump "));
        for (QAction* a : batchActions)
            a->setVisible(shown && dump->batch > 1);
        attentionAction->setVisible(shown && !dump->kind.empty());
        for (QAction* a : qkvActions)
            a->setVisible(shown && dumps->qkvDump());
        if (!dump) return;
        const QSignalBlocker b1(batch), b2(layer), b3(kv), b0(attention);
        if (!dump->kind.empty())
            attention->setCurrentIndex(
                std::max(0, attention->findData(QString::fromStdString(dump->kind))));
        batch->setRange(0, static_cast<int>(dump->batch - 1));
        batch->setValue(static_cast<int>(dumps->batch()));
        layer->setRange(0, static_cast<int>(dump->layers - 1));
        layer->setValue(static_cast<int>(dumps->layer()));
        if (const QkvDump* qkv = dumps->qkvDump()) {
            kv->setRange(1, static_cast<int>(qkv->kvHeads));
            kv->setValue(static_cast<int>(dumps->qkvApply().kvHeads > 0 ? dumps->qkvApply().kvHeads
                                                                        : qkv->kvHeads));
            // The combos say the spec in force (a real model opens as causal softmax).
            const QkvApply& apply = dumps->qkvApply();
            const QSignalBlocker b4(variant), b5(mask), b6(window_);
            const Variant shownVariant =
                apply.spec.variant == Variant::Flash ? Variant::Softmax : apply.spec.variant;
            variant->setCurrentIndex(
                std::max(0, variant->findData(static_cast<int>(shownVariant))));
            const MaskSpec& m = apply.spec.mask;
            mask->setCurrentIndex(m.causalWindow >= 0 ? 3 : m.window >= 0 ? 2 : m.causal ? 1 : 0);
            if (m.causalWindow >= 0) window_->setValue(static_cast<int>(m.causalWindow));
            if (m.window >= 0) window_->setValue(static_cast<int>(m.window));
        }
    };
    auto applySpec = [=] {
        QkvApply apply = dumps->qkvApply();
        apply.spec.variant = static_cast<Variant>(variant->currentData().toInt());
        // Soft-capping (Gemma 2) is the softmax's: other variants run without it.
        if (apply.spec.variant != Variant::Softmax) apply.spec.softcap.reset();
        const MaskSpec before = apply.spec.mask;
        apply.spec.mask = MaskSpec{};
        const int kind = mask->currentData().toInt();
        apply.spec.mask.causal = kind == 1;
        if (kind == 2) apply.spec.mask.window = window_->value();
        if (kind == 3) apply.spec.mask.causalWindow = window_->value();
        // A mask chosen by hand replaces the model's per-layer windows.
        if (before.causal != apply.spec.mask.causal || before.window != apply.spec.mask.window ||
            before.causalWindow != apply.spec.mask.causalWindow)
            apply.layerWindows.clear();
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
    // A long text's layer takes a moment on the worker: say so while the views wait for it.
    QObject::connect(dumps, &DumpDocument::layerPendingChanged, bar, [window, dumps](bool pending) {
        if (pending)
            window->statusBar()->showMessage(
                QObject::tr("Computing layer %1\u2026 the views show it when it is ready")
                    .arg(dumps->layer()));
        else
            window->statusBar()->clearMessage();
    });
    QObject::connect(attention, &QComboBox::activated, bar, [dumps, attention] {
        dumps->setAttentionKind(attention->currentData().toString());
    });
    QObject::connect(variant, &QComboBox::activated, bar, applySpec);
    QObject::connect(mask, &QComboBox::activated, bar, applySpec);
    QObject::connect(window_, &QSpinBox::editingFinished, bar, applySpec);
    QObject::connect(kv, &QSpinBox::valueChanged, bar, applySpec);
    sync();
}

} // namespace attnlab::ui
