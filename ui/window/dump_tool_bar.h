#pragma once
/// The window's controls for model dumps: File > Open Attention Dump…, Open Q/K/V Dump…,
/// Open Second Dump…, and the "Model" tool bar (the file shown, batch, layer, and the spec a
/// Q/K/V dump is re-run under). They drive the Document's DumpDocument (dump_document.h).

class QMainWindow;
class QMenu;

namespace attnlab::ui {

class Document;

/// Adds the dump entries to `fileMenu` and the "Model" tool bar to `window`.
void installDumpControls(QMainWindow* window, QMenu* fileMenu, Document* document);

} // namespace attnlab::ui
