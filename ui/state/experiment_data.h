#pragma once
/// Read-only helpers that pull display matrices out of an Experiment (batch 0), shared by the
/// views. Nothing here computes attention; it only slices what run() produced.

#include <QString>
#include <QStringList>

#include <vector>

#include "attnlab/attention/attention.h"
#include "attnlab/attention/mask.h"
#include "attnlab/base/result.h"
#include "attnlab/base/tensor.h"
#include "attnlab/io/npy.h"
#include "attnlab/lab/embedding.h"
#include "attnlab/lab/session.h"
#include "attnlab/lab/stats.h"

namespace attnlab::ui {

/// A token as people read it: the byte-level marker \u0120 ("Ġcat") and the sentencepiece
/// marker \u2581 ("▁cat") become spaces, a newline (\n, \u010a, <0x0A>) becomes \u23ce, a tab
/// \u2192; an empty or all-blank token shows as \u2423. The one display function every view
/// labels tokens with (the raw token stays in the tooltips).
QString displayToken(const std::string& token);
/// displayToken of each token.
QStringList displayTokens(const std::vector<std::string>& tokens);
/// The raw tokens (as the tokenizer or the dump wrote them), for tooltips.
QStringList rawTokens(const std::vector<std::string>& tokens);
/// What a figure shows, for its title: where the numbers come from (the model or dump and
/// layer, or "random projections"), the head, and for a lab session the variant and the mask
/// ("random projections (seed 7), softmax, causal mask, head 1 of 4").
/// Where an experiment's numbers come from, in the window's language: "gpt2, layer 3" (the
/// core's ExperimentSource::describe() says it in English for files and logs).
QString describeSource(const ExperimentSource& source);
QString figureCaption(const Experiment& experiment, Index head);
/// head clamped to [0, H); 0 when there are no heads.
Index clampedHead(const Experiment& experiment, Index head);
/// [Sq, Sk] attention weights of head h.
MatrixD headWeights(const Experiment& experiment, Index head);
/// [Sq, Sk] true where the cell is masked out: the experiment's mask in force.
BoolMatrix maskedCells(const Experiment& experiment);
/// A [S, D] head slice of a tensor (batch 0) as double.
MatrixD headSlice(const Tensor4& tensor, Index head);

} // namespace attnlab::ui
