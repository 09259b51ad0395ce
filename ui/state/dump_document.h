#pragma once
/// DumpDocument: the model dump the window is showing (attnlab/dump.h), beside the Document.
/// It owns the dump (attention weights, or Q/K/V re-run under a chosen spec), the chosen
/// batch entry and layer, a second dump for the difference view, and the cached head
/// statistics table. It hands the chosen (batch, layer) to Document::setExternalExperiment,
/// so the heatmap, heads, entropy and statistics views draw a real model unchanged; the head
/// is the Document's focused head. One DumpDocument per Document: DumpDocument::of().

#include <QImage>
#include <QObject>
#include <QString>

#include <memory>
#include <optional>
#include <vector>

#include "attnlab/attention/attention.h"
#include "attnlab/attention/mask.h"
#include "attnlab/base/result.h"
#include "attnlab/base/tensor.h"
#include "attnlab/io/npy.h"
#include "attnlab/lab/embedding.h"
#include "attnlab/lab/session.h"
#include "attnlab/lab/stats.h"

#include "attnlab/io/dump.h"
#include "attnlab/lab/dump_experiment.h"

namespace attnlab::ui {

class Document;
template <typename T> class LatestTask;

/// Facts of where a Q/K/V dump shown by showQkv() came from, copied into every experiment.
struct QkvOrigin {
    ExperimentSource::Kind kind = ExperimentSource::Kind::QkvDump;
    Positional positional = Positional::None; ///< how q and k were rotated (RoPE view)
    double ropeBase = 10000.0;
    /// Each RoPE pair's inverse frequency theta_t as the model's forward rotates with (its
    /// rope_scaling applied); empty: ropeBase^(-2t/D).
    std::vector<double> ropeFrequencies{};
    /// >= 0: the experiment carries the KV-cache steps of decoding after this many rows
    /// (when the spec is causal softmax), so the KV-cache view steps through the real layer.
    Index kvPrefill = -1;
    /// The wall time that produced the q/k/v (a model's forward), shown as the experiments'
    /// time; 0 when nothing was timed (a file).
    double milliseconds = 0;
};

class DumpDocument : public QObject {
    Q_OBJECT
public:
    /// The DumpDocument of `document` (created as its child on first use).
    static DumpDocument* of(Document* document);

    Document* document() const { return m_document; }
    /// The attention weights shown (for a Q/K/V dump: every layer re-run under qkvApply()).
    /// Null when no dump is open.
    const AttentionDump* dump() const { return m_dump.get(); }
    /// The same, shared: it stays valid for a worker after another dump replaces it.
    std::shared_ptr<const AttentionDump> sharedDump() const { return m_dump; }
    /// The Q/K/V dump, when the open dump is one.
    const QkvDump* qkvDump() const { return m_qkv.get(); }
    /// True while the document shows this dump (a session edit or open ends it).
    bool active() const;
    Index batch() const { return m_batch; }
    Index layer() const { return m_layer; }
    /// The file name shown in titles.
    QString displayName() const;

    /// Opens an attention dump (.npy / .npz) with optional tokens file. On failure the
    /// previous state is kept, errorOccurred (and the Document's) carries the message.
    /// A translation run's file opens its `kind` attention ("cross", "encoder", "decoder";
    /// empty: cross).
    bool openAttention(const QString& path, const QString& tokensPath = {}, Index batch = 0,
                       const QString& kind = {});
    /// Shows an attention dump already read (attnlab render checks it before drawing). A
    /// real translation model's run passes its origin and keeps the layer shown.
    void showAttention(AttentionDump dump, Index batch = 0,
                       const QkvOrigin& origin = QkvOrigin{ExperimentSource::Kind::AttentionDump},
                       Index layer = 0);
    /// Shows another of a translation's three attentions: reopens the file, or asks the
    /// model (attentionKindRequested) when a translation model is shown.
    void setAttentionKind(const QString& kind);
    /// Opens a Q/K/V dump (.npz with q, k, v) and runs every layer under qkvApply().
    bool openQkv(const QString& path, const QString& tokensPath = {});
    /// Shows Q/K/V already in memory (a real model's run: model_document.h) at `layer`,
    /// under `apply`. `weights`, when given, are the attention the model itself computed
    /// (shown as is, computed when asked, instead of re-running every layer). Experiments take
    /// `origin`'s facts. `shownLayer`, when given, is qkvLayerExperiment(qkv, layer, apply,
    /// origin) already computed (on the worker that ran the model). A comparison of the same
    /// shape is kept.
    void showQkv(QkvDump qkv, const QkvApply& apply, std::optional<AttentionDump> weights,
                 Index layer, const QkvOrigin& origin = {},
                 std::optional<Experiment> shownLayer = {});
    /// Counts the changes of what is shown (a dump, a spec, a run): a layer computed ahead
    /// under the spec of an earlier count is stale.
    quint64 changeCount() const { return m_changes; }
    /// The kind of source the shown experiments have (QkvDump, AttentionDump or Model).
    ExperimentSource::Kind sourceKind() const { return m_origin.kind; }
    /// Where the Q/K/V shown came from (showQkv's origin).
    const QkvOrigin& origin() const { return m_origin; }
    /// A second attention dump for the difference view; it must have the same shape.
    bool openComparison(const QString& path);
    const AttentionDump* comparison() const { return m_comparison ? &*m_comparison : nullptr; }

    /// The spec the Q/K/V dump is re-run under (variant, mask, scale, GQA sharing).
    const QkvApply& qkvApply() const { return m_apply; }
    /// Re-runs the Q/K/V dump under `apply`; false (state kept) when the spec is invalid.
    bool setQkvApply(const QkvApply& apply);

    void setBatch(Index batch);
    /// Shows another layer. A long text's layer under a model's or Q/K/V dump's spec (past
    /// setInlineLayerCells weights) is computed on a worker: layer() changes at once, the views
    /// keep the previous layer until it is ready (layerPending), and a newer request or
    /// change replaces it.
    void setLayer(Index layer);
    /// True while the layer asked for is computed on the worker.
    bool layerPending() const;
    /// The number of weights (H x Sq x Sk) past which setLayer computes on the worker
    /// (default 3e7: GPT-2 small's layer at ~1 600 tokens, a moment's work below it).
    void setInlineLayerCells(double cells) { m_inlineLayerCells = cells; }
    /// Processes events until the layer asked for is shown (export, screenshots, tests).
    void waitForLayer();
    /// Shows (layer, head): the layer's experiment in the Document, the head focused.
    void focus(Index layer, Index head);
    /// Per (layer, head) statistics of the current batch, computed on first use.
    const std::vector<HeadSummary>& headTable();

    /// Every head's thumbnail of the dump shown, [layer * heads + head]: its map block-averaged
    /// to at most `pixels` a side and scaled to its own maximum, through `table` (256 colours).
    /// Made at once where the dump holds its maps or they are few (kInlineThumbnailCells in
    /// all), else on a worker with one map alive per thread (thumbnailsChanged when they are
    /// in; until then the thumbnails are empty). Asks unless those shown or in flight are of
    /// this dump, table and size.
    void requestThumbnails(const std::vector<QRgb>& table, int pixels);
    const std::vector<QImage>& thumbnails() const { return m_thumbnails; }
    bool thumbnailsComputing() const;
    void waitForThumbnails();
    static constexpr double kInlineThumbnailCells = 5.0e7;

signals:
    /// A new dump, batch, Q/K/V spec or comparison: everything derived is stale.
    void dumpChanged();
    /// The layer changed (same dump).
    void layerChanged();
    /// A layer is being computed on the worker (true), or it is shown or dropped (false).
    void layerPendingChanged(bool pending);
    void errorOccurred(const QString& message);
    /// A translation model's run is shown and another attention is asked for.
    void attentionKindRequested(const QString& kind);
    /// The thumbnails asked for are in.
    void thumbnailsChanged();

private:
    explicit DumpDocument(Document* document);
    ~DumpDocument() override;
    void fail(const QString& message);
    void showLayer();
    /// Every layer of the Q/K/V dump under `apply`, computed a layer at a time when asked.
    static AttentionDump runAllLayers(std::shared_ptr<const QkvDump> qkv, QkvApply apply);

    /// What thumbnails are made of: a dump (its serial), a colour table, a size.
    struct ThumbnailKey {
        quint64 dump = 0;
        std::vector<QRgb> table;
        int pixels = 0;
        bool operator==(const ThumbnailKey&) const = default;
    };
    struct Thumbnails {
        std::vector<QImage> images;
        ThumbnailKey key;
    };

    Document* m_document;
    quint64 m_dumpSerial = 0; ///< counts dumpChanged
    std::vector<QImage> m_thumbnails;
    std::optional<ThumbnailKey> m_thumbnailsOf; ///< what m_thumbnails, or the run in flight, are of
    std::unique_ptr<LatestTask<Thumbnails>> m_thumbnailTask;
    std::shared_ptr<const AttentionDump> m_dump;
    std::shared_ptr<const QkvDump> m_qkv;
    /// setLayer's computation of a long text's layer (shared: a future's result is copied).
    std::unique_ptr<LatestTask<std::shared_ptr<Experiment>>> m_layerTask;
    double m_inlineLayerCells = 3e7;
    quint64 m_layerChanges = 0; ///< m_changes when the layer computed on the worker was asked for
    std::optional<AttentionDump> m_comparison;
    QkvApply m_apply;
    QkvOrigin m_origin{ExperimentSource::Kind::AttentionDump};
    Index m_batch = 0;
    Index m_layer = 0;
    std::vector<HeadSummary> m_table;
    bool m_tableValid = false;
    quint64 m_changes = 0;
};

/// The experiment the views draw for `layer` of a Q/K/V dump shown under `apply` (the layer
/// re-run, with the KV-cache steps of a model's causal run): what DumpDocument shows, and what
/// a worker computes ahead of it. Throws InvalidArgument as applyToQkvLayer does.
Experiment qkvLayerExperiment(const QkvDump& qkv, Index layer, const QkvApply& apply,
                              const QkvOrigin& origin);

/// The inverse frequency theta_t of each RoPE pair of `experiment` (head dimension D, D / 2
/// values) as what produced it rotates: a real model's own when `document` shows one (its
/// rope_scaling applied, as its forward does), else ropeBase^(-2t/D) (core/rope.h).
std::vector<double> ropeFrequencies(Document* document, const Experiment& experiment);

} // namespace attnlab::ui
