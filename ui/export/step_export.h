#pragma once
/// Step export: the whole FlashAttention tile sequence or KV-cache decode sequence of a
/// stepping view (flash, kv-cache) as numbered PNG frames (DIR/frame_0001.png, ...) or as one
/// multi-page PDF. Used by the window's "Export all steps" and by `attnlab render --all-steps`.

#include <QSize>
#include <QString>

#include <utility>

#include "attnlab/attention/attention.h"
#include "attnlab/attention/mask.h"
#include "attnlab/base/result.h"
#include "attnlab/base/tensor.h"
#include "attnlab/io/npy.h"
#include "attnlab/lab/embedding.h"
#include "attnlab/lab/session.h"
#include "attnlab/lab/stats.h"

namespace attnlab::ui {

class Document;
class View;

/// True for the ids of views that step (flash, kv-cache, translation).
bool isStepView(const QString& viewId);
/// The first and last step a stepping view can show (flash: 0..tiles, kv-cache:
/// 0..decode steps, translation: 0..words written - 1); {0, 0} for any other view or when there is no experiment.
std::pair<Index, Index> stepRange(View& view);
/// Sets the view's step in the session's view state through the document (clamped); the
/// translation view keeps its own.
void setStep(View& view, Document& document, Index step);
/// Writes every step of the view: `path` ending in .pdf gives one page per step (logical
/// `size` in points); any other path is a directory (created if missing) that receives
/// frame_0001.png ... at size * scale pixels. The view state's step is restored afterwards.
/// A failure's message names the file and the problem.
Status exportSteps(View& view, Document& document, const QString& path, const QSize& size,
                   double scale = 1.0);

} // namespace attnlab::ui
