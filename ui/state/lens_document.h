#pragma once
// What the model's latest run gives the lens tabs, computed on a worker when a tab asks and
// handed to the views as plain data: the logit lens (each layer's most probable next tokens at
// each position) and the direct logit attribution (each head's and MLP's share of one logit)
// of the ModelDocument's run, its text and switched-off heads. A newer run or question cancels
// the computation in flight, and the previous result stays until the new one is in.

#include <QObject>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "attnlab/model/lens.h"

namespace attnlab::model {
struct ModelRun;
}

namespace attnlab::ui {

class Document;
template <typename T> class LatestTask;

/// The logit lens of a run: [L + 1][S], the residual after the embedding and after each layer.
struct LensTable {
    std::vector<std::vector<std::vector<model::RankedToken>>> cells; ///< each cell's top tokens
    std::vector<std::vector<model::RankedToken>> top; ///< each cell's most probable token
    QStringList tokens;                               ///< the run's tokens, the columns
};

class LensDocument : public QObject {
    Q_OBJECT
public:
    /// The LensDocument of `document` (created as its child on first use).
    static LensDocument* of(Document* document);
    ~LensDocument() override;

    /// Most probable tokens kept per cell of the lens (the logits themselves, (L + 1) S V
    /// floats, are not kept).
    static constexpr Index kTopTokens = 5;

    /// The lens of the model's latest run: asks for it unless it is shown or in flight (a tab's
    /// refresh). Without a run of a one-sequence model, forgets the lens instead.
    void requestLens();
    const LensTable& lens() const { return m_lens; }
    /// Why the last lens asked for failed; empty when it did not.
    const QString& lensError() const { return m_lensError; }
    bool lensComputing() const;
    void waitForLens();

    /// The attribution of the latest run's last position to `asked`'s target (the prediction
    /// when empty) against its contrast: asked for unless it is shown or in flight. Without a
    /// run of a one-sequence model, forgets it instead.
    void requestAttribution(const model::AttributionOptions& asked);
    /// Forgets the attribution (a model it does not add up for, a field that does not read as a
    /// token): `why` stands as its error.
    void clearAttribution(const QString& why = {});
    const std::optional<model::Attribution>& attribution() const { return m_attribution; }
    const QString& attributionError() const { return m_attributionError; }
    bool attributionComputing() const;
    void waitForAttribution();

signals:
    void lensChanged();
    void attributionChanged();

private:
    /// A computation's error, shown by the window (the document's errorOccurred).
    void report(const QString& what, const QString& error);
    explicit LensDocument(Document* document);

    Document* m_document;
    std::unique_ptr<LatestTask<LensTable>> m_lensTask;
    std::weak_ptr<const model::ModelRun> m_lensRun; ///< the run the lens is or will be of
    LensTable m_lens;
    QString m_lensError;

    std::unique_ptr<LatestTask<model::Attribution>> m_attributionTask;
    std::weak_ptr<const model::ModelRun> m_attributionRun;
    std::optional<std::int64_t> m_askedTarget, m_askedContrast;
    std::optional<model::Attribution> m_attribution;
    QString m_attributionError;
};

/// A model whose residual stream the lens tabs read: one sequence (not an encoder-decoder).
bool readsOneSequence(const model::Model& net);

} // namespace attnlab::ui
