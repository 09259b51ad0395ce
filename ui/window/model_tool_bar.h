#pragma once
/// The window's controls for a real model (model_document.h): File > Open Model… (Ctrl+Shift+O),
/// Open Recent Model, Close Model, the bundled trained model under File > Examples, a progress
/// dialog with Cancel while a checkpoint loads, the "Real model" tool bar (show the model again,
/// switch heads off) and the status-bar badge that says where the numbers on screen come from:
/// the model's name, a dump's file, or "untrained: random projections".

#include <QString>
#include <QStringList>

#include <vector>

class QLabel;
class QMainWindow;
class QMenu;

namespace attnlab::ui {

class Document;
class ModelDocument;

/// Adds the model entries to `fileMenu` and `examplesMenu`, the tool bar and the badge.
void installModelControls(QMainWindow* window, QMenu* fileMenu, QMenu* examplesMenu,
                          Document* document);

/// The badge's text for what `document` shows now.
QString weightsBadgeText(Document* document);
/// Whether the model folder `directory` was trained by this project: its README.md names one
/// of the project's training scripts (scripts/train_*.py), as the bundled models' do.
bool trainedByTheProject(const QString& directory);

/// The folder of the bundled trained model (resources/models/tiny-llama-induction), looked for
/// beside the program and in its source tree; empty when it cannot be found.
QString bundledModelDirectory(const QString& name = QStringLiteral("tiny-llama-induction"));
/// The bundled English->Chinese translation model's folder (same search), or empty.
QString bundledTranslationModelDirectory();

/// What a bundled model trained on the project's small grammar knows, in plain words for a
/// class: which grammar, and sentences that work. Empty for any other model (whose training
/// the window does not know).
QString grammarNote(const ModelDocument& models);

/// A word of the text that the shown model's vocabulary does not hold whole.
struct OutsideWord {
    QString word;
    QStringList pieces;   ///< its tokens as people read them ("w", "e", "at", "her")
    bool unknown = false; ///< a piece is the tokenizer's unknown token (<unk>, [UNK])
};
/// The words of the shown model's text outside its vocabulary: any word read as the unknown
/// token, and for a model with a grammarNote() (every word of its grammar is one token, a
/// plural one and "s") a word spelt in pieces. Punctuation around a word and special tokens
/// ([MASK]) are left out. Empty when no model is shown.
std::vector<OutsideWord> wordsOutsideVocabulary(const ModelDocument& models);

} // namespace attnlab::ui
