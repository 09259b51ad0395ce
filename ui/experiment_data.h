#pragma once
/// Read-only helpers that pull display matrices out of an Experiment (batch 0), shared by the
/// views. Nothing here computes attention; it only slices what run() produced.

#include <QString>
#include <QStringList>

#include <vector>

#include "ui/core.h"

namespace attnlab::ui {

/// Tokens as display strings; an empty token shows as a visible marker.
QStringList displayTokens(const std::vector<std::string>& tokens);
/// head clamped to [0, H); 0 when there are no heads.
Index clampedHead(const Experiment& experiment, Index head);
/// The kv head query head h reads (h / (H / Hkv)).
Index kvHeadOf(const Experiment& experiment, Index head);
/// [Sq, Sk] attention weights of head h.
MatrixD headWeights(const Experiment& experiment, Index head);
/// [Sq, Sk] raw dot products q_i . k_j of head h (no scale), in double.
MatrixD rawScores(const Experiment& experiment, Index head);
/// [Sq, Sk] scaled logits of head h (what the softmax sees before the mask).
MatrixD scaledScores(const Experiment& experiment, Index head);
/// [Sq, Sk] true where the cell is masked out: the experiment's mask in force.
BoolMatrix maskedCells(const Experiment& experiment);
/// A [S, D] head slice of a tensor (batch 0) as double.
MatrixD headSlice(const Tensor4& tensor, Index head);

} // namespace attnlab::ui
