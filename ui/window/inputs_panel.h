#pragma once
/// InputsPanel: everything a person sets up: token text (or two texts for cross-attention),
/// tokenizer, token chips, model settings, scale/temperature, the variant and the masks.
/// Every change is one undoable Document edit; the panel follows the Document on undo/redo.

#include <QWidget>

#include <vector>

#include "ui/state/document.h"
#include "ui/window/model_tool_bar.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QSlider;
class QSpinBox;

namespace attnlab::ui {

/// The variant picker's entries; each sets the session fields it stands for.
enum class VariantPreset {
    Softmax,
    MultiHead,
    Cross,
    Gqa,
    Mqa,
    SlidingWindow,
    Linear,
    Additive,
    Flash,
    KvCache
};

/// The preset a session looks like (the most specific one).
VariantPreset classifySession(const Session& session);
/// Applies a preset to a session, keeping everything it does not concern.
void applyPreset(Session& session, VariantPreset preset);

class InputsPanel : public QWidget {
    Q_OBJECT
public:
    explicit InputsPanel(Document* document, QWidget* parent = nullptr);

    QLineEdit* textEdit() const { return m_text; }
    QLineEdit* sourceEdit() const { return m_source; }
    QComboBox* variantCombo() const { return m_variant; }
    /// The lab's tokenizer choice, or (disabled) the name of a shown model's own tokenizer.
    QComboBox* tokenizerCombo() const { return m_tokenizer; }
    QCheckBox* causalCheck() const { return m_causal; }
    QCheckBox* crossCheck() const { return m_cross; }
    QCheckBox* windowCheck() const { return m_window; }
    QSpinBox* windowSpin() const { return m_windowSize; }
    QSpinBox* headsSpin() const { return m_heads; }
    QListWidget* chips() const { return m_chips; }
    QLabel* problemLabel() const { return m_problemLabel; }
    /// "Showing gpt2.npz, layer 3 ..." while a model dump is on screen; hidden otherwise.
    QLabel* sourceNote() const { return m_sourceNote; }
    /// The words outside a shown model's vocabulary and what it was trained on; hidden when
    /// there is nothing to say.
    QLabel* modelNote() const { return m_modelNote; }

protected:
    /// Keeps the whole form visible when the theme changes the font size.
    void changeEvent(QEvent* event) override;

private:
    void fitWidth();
    void updateFromSession();
    /// Sets the text box to the text of what the views show (the model's or the lab's).
    void showShownText();
    void updateChips();
    /// The lab's tokenizers to choose from, or a shown model's own one named and no choice.
    void updateTokenizer();
    void updateProblems();
    /// The note under the chips: the words outside a shown model's vocabulary and what a
    /// model trained on a small grammar knows.
    void updateModelNote();
    void editMask();
    void editScale(int position);
    /// slider position -> multiple of 1/sqrt(d_head)
    static double sliderFactor(int position);

    Document* m_document;
    QWidget* m_content = nullptr;
    QLineEdit* m_text = nullptr;
    QCheckBox* m_cross = nullptr;
    QLineEdit* m_source = nullptr;
    QComboBox* m_tokenizer = nullptr;
    QListWidget* m_chips = nullptr;
    QSpinBox* m_dModel = nullptr;
    QSpinBox* m_heads = nullptr;
    QSpinBox* m_kvHeads = nullptr;
    QComboBox* m_positional = nullptr;
    QSpinBox* m_seed = nullptr;
    QCheckBox* m_identity = nullptr;
    QSlider* m_scale = nullptr;
    QLabel* m_scaleLabel = nullptr;
    QDoubleSpinBox* m_temperature = nullptr;
    QComboBox* m_variant = nullptr;
    QCheckBox* m_causal = nullptr;
    QCheckBox* m_padding = nullptr;
    QSpinBox* m_validLen = nullptr;
    QCheckBox* m_window = nullptr;
    QSpinBox* m_windowSize = nullptr;
    QCheckBox* m_causalWindow = nullptr;
    QSpinBox* m_causalWindowSize = nullptr;
    QCheckBox* m_custom = nullptr;
    QLabel* m_problemLabel = nullptr;
    QLabel* m_sourceNote = nullptr;
    QLabel* m_modelNote = nullptr;
    /// The shown model's words outside its vocabulary, for the model and text in m_outsideKey.
    std::vector<OutsideWord> m_outside;
    QString m_outsideKey;
};

} // namespace attnlab::ui
