#pragma once
/// ModelDocument: a real checkpoint in the window (attnlab/model/model.h), beside the Document
/// and its DumpDocument. It owns the loaded Model, its Tokenizer, the text it runs on and the
/// latest ModelRun (logits of the last position, q/k/v recorded). Loading and running happen
/// on a worker thread: edits are coalesced by a short timer, a stale run is cancelled through
/// the core's atomic flag, and a run whose ids extend the previous run's reuses its KV cache.
///
/// Each finished run is handed to the DumpDocument as a Q/K/V dump of the real model (the
/// same seam as File > Open Q/K/V Dump), so every view — heatmap, heads, model view,
/// aggregates, statistics, the steppers, "what if" — draws the chosen layer and head of the
/// real model. One ModelDocument per Document: ModelDocument::of().
///
///   auto* models = ModelDocument::of(document);
///   models->openModel("resources/models/tiny-llama-induction");   // async; modelChanged()
///   models->setText("the cat sat on the mat");                      // runChanged() later
///   models->run()->logits                                           // [1, V]

#include <QImage>
#include <QObject>
#include <QString>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/attention/attention.h"
#include "attnlab/attention/mask.h"
#include "attnlab/base/result.h"
#include "attnlab/base/tensor.h"
#include "attnlab/io/dump.h"
#include "attnlab/io/npy.h"
#include "attnlab/lab/dump_experiment.h"
#include "attnlab/lab/embedding.h"
#include "attnlab/lab/session.h"
#include "attnlab/lab/stats.h"

#include "attnlab/model/head_roles.h"
#include "attnlab/model/image_processor.h"
#include "attnlab/model/model.h"
#include "attnlab/tokenizer/tokenizer.h"

namespace attnlab::ui {

class Document;
class DumpDocument;
template <typename T> class LatestTask;

/// The heads switched off: (layer, head) pairs.
using HeadSet = std::set<std::pair<Index, Index>>;

/// What a load produces on the worker (a Model and its Tokenizer, or a message).
struct ModelLoadOutput;
/// What a run produces on the worker.
struct ModelRunOutput;
/// The model's text and its ids: what an undo step of the text applies.
struct ModelInput;

/// The image an image classifier reads: the picture as opened (what the views draw under the
/// attention) and its pixel values as the model's image processor makes them.
struct ModelImage {
    QImage picture;            ///< 8-bit RGB, as opened
    std::vector<float> pixels; ///< [C, H, W], processed
    QString name;              ///< the file's name, for titles
};

/// A translation model's run as the window shows it: the translation decoded from the text,
/// the tokens written (row i of the run's cross-attention is the step that wrote tokens[i])
/// and the model's own probability of each (temperature 1, no cut, as `attnlab model
/// --translate` prints them). Empty for other models.
struct WrittenTranslation {
    QString text;
    std::vector<std::int64_t> tokens;
    std::vector<double> probabilities;
};

class ModelDocument : public QObject {
    Q_OBJECT
public:
    /// The ModelDocument of `document` (created as its child on first use).
    static ModelDocument* of(Document* document);
    ~ModelDocument() override;

    Document* document() const { return m_document; }
    DumpDocument* dumps() const { return m_dumps; }

    /// The loaded model, its tokenizer and the latest finished run; null when none.
    const model::Model* model() const { return m_model.get(); }
    const model::Tokenizer* tokenizer() const { return m_tokenizer.get(); }
    /// The latest run of text() (logits of the last position, q/k/v recorded); null until the
    /// first run finishes. It matches ids() once idle().
    const model::ModelRun* run() const { return m_run.get(); }
    /// The same run, shared: it stays valid after the next run replaces it.
    std::shared_ptr<const model::ModelRun> sharedRun() const { return m_run; }
    /// Every head's role on run()'s text; null until requestRoles() measured them.
    const std::vector<model::HeadRole>* runRoles() const { return m_roles.get(); }
    /// Measures runRoles() on a worker unless they are measured or being measured (every
    /// head's map in turn, one alive at a time); rolesChanged() when they are. Typing does
    /// not wait for them: the head-roles view asks when it is shown.
    void requestRoles();
    /// Whether run() has roles to measure (a model of one sequence has run).
    bool rolesMeasurable() const;
    /// Processes events until the requested roles are measured (export, tests).
    void waitForRoles();
    /// The model, shared: a worker thread may run it (it is immutable once loaded) and it
    /// stays valid after another model replaces it.
    std::shared_ptr<const model::Model> sharedModel() const { return m_model; }

    /// True while a model is loaded and the document shows it (a session edit, session open
    /// or dump open ends it; showModel() brings it back).
    bool active() const;
    /// The model's folder name ("tiny-llama-induction"), for titles and the badge; empty when
    /// no model is loaded.
    QString displayName() const;
    QString directory() const;
    /// The text the model runs on, and its ids / tokens (the tokenizer's, kept in step).
    QString text() const { return m_text; }
    const std::vector<std::int64_t>& ids() const { return m_ids; }
    /// The tokens of run() as people read them: byte-level "Ġ" and sentencepiece "▁" shown
    /// as spaces, special tokens as they are; an image classifier's "[CLS]", "r0c0", ...
    std::vector<std::string> tokenLabels() const;
    /// A translation's rows: the word each decoder step wrote (its input tokens when the
    /// decoder did not run on its own output); empty for other models.
    std::vector<std::string> writtenTokenLabels() const;

    /// An image classifier (ViT) is loaded: it reads image() instead of text().
    bool readsImages() const;
    /// Its image processor; null for a text model.
    const model::ImageProcessor* imageProcessor() const { return m_processor.get(); }
    /// The image an image classifier runs on; null until one is opened.
    std::shared_ptr<const ModelImage> image() const { return m_image; }
    /// The image run() was made from (an image classifier's).
    std::shared_ptr<const ModelImage> runImage() const { return m_runImage; }
    /// Reads an image file (PNG, JPEG, ...) and runs the model on it, one undo step; false
    /// with errorOccurred when the file is not an image or no image classifier is loaded
    /// (nothing changes then). While a model loads, the file is read once it has loaded.
    bool openImage(const QString& path);
    /// The same for a picture in memory (a drop, a bundled example); `name` titles it.
    bool setImage(const QImage& picture, const QString& name);

    /// Starts loading the checkpoint in `directory` on a worker (loadProgress, then
    /// modelChanged or errorOccurred). A bad folder keeps the previous model and run.
    void openModel(const QString& directory);
    /// Loads on this thread (headless render, tests); false with errorOccurred on failure.
    bool openModelNow(const QString& directory);
    /// What the window says of a model folder without a tokenizer: the file to add, and the
    /// command line that runs the model on ids without one.
    static QString noTokenizerMessage(const QString& directory);
    /// Shows a model already loaded (render checks it before Qt starts): the text is
    /// tokenized again and run; ablations and their undo steps are dropped.
    void setModel(std::shared_ptr<const model::Model> loaded,
                  std::shared_ptr<const model::Tokenizer> tokenizer,
                  std::shared_ptr<const model::ImageProcessor> processor = nullptr);
    /// Stops a load in progress (the previous model stays).
    void cancelLoad();
    bool loading() const { return m_loading; }

    /// The text to run. Bursts of calls are coalesced; a run in flight for older text is
    /// cancelled. Empty text runs the tokenizer's special tokens only (or nothing).
    void setText(const QString& text);
    /// The person's edit of the text: setText() as one undo step on the Document's undo stack
    /// (consecutive edits merge into one step, as typing in the lab's text does).
    void editText(const QString& text);
    /// Appends one token id to the current ids (generation step by step), one undo step: the
    /// next run extends the previous one through its KV cache.
    void appendToken(std::int64_t id);

    /// The heads switched off in every run.
    HeadSet ablatedHeads() const { return m_ablated; }
    /// Switches off exactly `heads`: one undo step on the Document's undo stack per call
    /// (nothing when it equals ablatedHeads()); the model re-runs.
    void setAblatedHeads(const HeadSet& heads);

    /// The chosen layer (views draw it) and head (the Document's focused head).
    Index layer() const { return m_layer; }
    Index head() const;
    void focus(Index layer, Index head);
    void setLayer(Index layer);

    /// Makes the document show the model again (after a session edit returned it to the lab).
    void showModel();
    /// The person's Show Model: showModel() as one undo step, whose undo shows the lab session
    /// again. Switching to the lab is a session edit, itself one step. Nothing while the model
    /// is shown.
    void showModelStep();
    /// Closes the model: the document goes back to the lab session, which keeps the text typed
    /// while the model was shown (one undo step; undo brings the lab's own text back).
    void closeModel();

    /// True while the model runs on a worker (runningChanged, runProgress).
    bool running() const;
    /// Stops the run in flight: the views keep the previous run, the text stays as typed (the
    /// next edit runs it again). Nothing when no run is in flight.
    void cancelRun();
    /// True when no load or run is pending or in flight.
    bool idle() const;
    /// Runs any pending run now and waits for it (tests, headless render); false on timeout.
    bool waitForIdle(int timeoutMs = 60000);

    /// The wall time in milliseconds of the forward that produced run() (the model tool bar;
    /// the status bar shows it through the experiment's milliseconds). A run shown again from
    /// the recent runs keeps the time its forward took.
    double lastRunMilliseconds() const { return m_lastRunMs; }
    /// A translation model: the text's translation, decoded greedily (empty otherwise).
    QString translation() const { return m_written.text; }
    /// A translation's written tokens with the model's own probability of each (temperature 1,
    /// as `attnlab model --translate` prints them), in the order of writtenTokenLabels();
    /// empty for other models.
    const std::vector<double>& writtenProbabilities() const { return m_written.probabilities; }
    /// The most target tokens the window decodes from a text.
    static Index translationTokenLimit();
    /// True when the translation stopped at translationTokenLimit() before the model ended it
    /// (no </s>): the end of the text is left untranslated.
    bool translationCutShort() const;
    /// Which of a translation's attentions the views show: "cross", "encoder" or "decoder".
    QString attentionKind() const { return m_attentionKind; }
    void setAttentionKind(const QString& kind);

signals:
    /// A new model was loaded (or closed): shapes, names and the tokenizer changed.
    void modelChanged();
    /// A new run is available (text, appended token or ablation changed).
    void runChanged();
    /// image() changed (opened, dropped, undone).
    void imageChanged();
    /// text() changed by an undo, a redo or an appended token (the text box follows at once,
    /// before the run).
    void textChanged();
    /// Loading progress, 0..1 (from the GUI thread).
    void loadProgress(double fraction);
    /// Loading started or finished (success, failure or cancel).
    void loadingChanged(bool loading);
    /// A run on the worker started or ended.
    void runningChanged(bool running);
    /// The share of the run's layers done, 0..1 (from the GUI thread, at most once a percent).
    void runProgress(double fraction);
    /// The layer shown changed.
    void layerChanged();
    /// runRoles() were measured.
    void rolesChanged();
    void errorOccurred(const QString& message);
    /// A folder did not open as a model (not on cancel): the whole message, also sent through
    /// errorOccurred, for a window to show in full.
    void loadFailed(const QString& message);

private:
    explicit ModelDocument(Document* document);
    void fail(const QString& message);
    /// A folder that did not open: fail(), and loadFailed for a window to show it whole.
    void failLoad(const QString& message);
    void finishLoad(ModelLoadOutput output);
    /// Asks for a run of the text (m_runs): coalesced, started once control is back in the
    /// event loop.
    void scheduleRun();
    /// A finished run; `latest`: of the text as it is now.
    void finishRun(ModelRunOutput output, bool latest);
    /// Hands the run to the DumpDocument as a Q/K/V dump at m_layer.
    void publish();
    /// The spec the run is shown under: the model's own, or the "what if" spec the window
    /// showed it under.
    QkvApply shownApply() const;
    /// Shows m_run through the DumpDocument: its q/k/v (`qkv`, or made from the run), its maps
    /// computed when asked, and the shown layer's experiment when computed ahead.
    void showRun(std::optional<QkvDump> qkv, const QkvApply& apply,
                 std::optional<Experiment> shownLayer);
    /// A translation model's run: the attention of m_attentionKind as an attention dump.
    void showTranslation();
    /// Applies an ablation set without undo (the undo step's redo/undo).
    void applyAblation(const HeadSet& heads);
    /// Sets the text and its ids without undo (the text step's redo/undo).
    void applyInput(const QString& text, const std::vector<std::int64_t>& ids);
    /// True when an image classifier and its processor are loaded; else says so (errorOccurred).
    bool takesImages();
    /// Sets the image without undo (the image step's redo/undo).
    void applyImage(std::shared_ptr<const ModelImage> image);
    /// Whether `run`, made from `image`, is a run of what the document holds now.
    bool isCurrent(const model::ModelRun& run,
                   const std::shared_ptr<const ModelImage>& image) const;
    /// The names of run()'s tokens as the views label them.
    std::vector<std::string> runLabels() const;
    /// Pushes the undo step from the text and ids now to `next`.
    void pushInput(ModelInput next, int mergeId, const QString& description);

    Document* m_document;
    DumpDocument* m_dumps;
    std::shared_ptr<const model::Model> m_model;
    std::shared_ptr<const model::Tokenizer> m_tokenizer;
    std::shared_ptr<const model::ImageProcessor> m_processor;
    std::shared_ptr<const ModelImage> m_image;    ///< what the next run reads
    std::shared_ptr<const ModelImage> m_runImage; ///< what m_run read
    std::shared_ptr<const model::ModelRun> m_run;
    using Roles = std::shared_ptr<const std::vector<model::HeadRole>>;
    Roles m_roles; ///< of m_run, when measured
    std::unique_ptr<LatestTask<Roles>> m_rolesTask;
    std::shared_ptr<const model::ModelRun> m_rolesRun; ///< the run m_rolesTask measures
    /// The last few runs and their forwards' wall times: the same ids and ablation again (an
    /// undo, a retyped word) are shown from here at once, and exactly as they were.
    struct RecentRun {
        std::shared_ptr<const model::ModelRun> run;
        double milliseconds = 0;
        WrittenTranslation written;
        std::shared_ptr<const ModelImage> image;
    };
    std::deque<RecentRun> m_recent;
    QString m_text;
    std::vector<std::int64_t> m_ids;
    HeadSet m_ablated;
    Index m_layer = 0;
    bool m_shown = false;

    /// The forward of the text: the latest text's run wins.
    std::unique_ptr<LatestTask<ModelRunOutput>> m_runs;
    /// Opening a model: a second folder asked for while one loads stops that load and follows
    /// it; a stopped load hands nothing over.
    std::unique_ptr<LatestTask<ModelLoadOutput>> m_loadTask;
    bool m_loading = false;    ///< m_loadTask is busy (kept by its onBusyChanged)
    QString m_pendingImage;    ///< openImage() while loading: read once the model is
    double m_lastRunMs = 0;
    WrittenTranslation m_written;
    QString m_attentionKind = QStringLiteral("cross");
};

} // namespace attnlab::ui
