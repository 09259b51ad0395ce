#pragma once
/// Feeds the next-token and head-roles views from the window's ModelDocument and carries what
/// the person does in them back: append a token, run the induction probe, switch heads off
/// (one undo step each), show a head. The views themselves take plain data; this is the one
/// place that knows both sides.

#include <atomic>
#include <set>
#include <utility>

#include "ui/views/head_roles_view.h"
#include "ui/views/next_token_view.h"

#include "attnlab/model/model.h"

namespace attnlab::ui {

class ModelDocument;

/// The view's input for the model's latest run (no model: an empty modelName).
NextTokenInput nextTokenInputOf(const ModelDocument& models);
/// The table's input for the model's latest run: the roles measured on the current text.
HeadRolesInput headRolesInputOf(const ModelDocument& models);
/// Runs the induction probe on the loaded model with its ablated heads, on this thread.
/// Errors (no model, a probe longer than the model takes) come back as a message.
Result<HeadRolesProbe> runInductionProbe(const ModelDocument& models, Index length, quint64 seed);
/// The same on `net` with `ablated` heads off, from any thread: `cancel`, when set and true,
/// stops the run between layers with the error "cancelled".
Result<HeadRolesProbe> runInductionProbe(const model::Model& net,
                                         const std::set<std::pair<Index, Index>>& ablated,
                                         Index length, quint64 seed,
                                         const std::atomic<bool>* cancel = nullptr);

/// Keeps `view` in step with `models` (runChanged, modelChanged); Append appends the token.
void bindNextTokenView(NextTokenView* view, ModelDocument* models);
/// Keeps `view` in step with `models`; the probe, ablation and focus requests go to it. A
/// probe on screen is measured again when the ablated heads change. The probe runs on a worker
/// thread (the view's button cancels it meanwhile); a new request, another model or the
/// view's end cancels the one in flight, and a result for a model or heads no longer shown is
/// dropped.
void bindHeadRolesView(HeadRolesView* view, ModelDocument* models);

} // namespace attnlab::ui
