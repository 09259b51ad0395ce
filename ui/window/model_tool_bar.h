#pragma once
/// The window's controls for a real model (model_document.h): File > Open Model… (Ctrl+Shift+O),
/// Open Recent Model, Close Model, the bundled trained model under File > Examples, a progress
/// dialog with Cancel while a checkpoint loads, the "Real model" tool bar (show the model again,
/// switch heads off) and the status-bar badge that says where the numbers on screen come from:
/// the model's name, a dump's file, or "untrained: random projections".

#include <QString>

class QLabel;
class QMainWindow;
class QMenu;

namespace attnlab::ui {

class Document;

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

} // namespace attnlab::ui
