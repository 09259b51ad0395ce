// What the lab makes of a dump (attnlab/io/dump.h): the Experiment the views draw for one of
// its layers, as recorded or re-run under another spec from its Q/K/V, and the head
// statistics table. The dumps are files (io); these are the lab's analyses of them.
#pragma once

#include <memory>
#include <vector>

#include "attnlab/attention/attention.h"
#include "attnlab/base/tensor.h"
#include "attnlab/io/dump.h"
#include "attnlab/lab/session.h"
#include "attnlab/lab/stats.h"

namespace attnlab {

/// One row of the head statistics table.
struct HeadSummary {
    Index layer = 0;
    Index head = 0;
    double meanEntropy = 0;    ///< HeadStats::meanEntropy (nats, over non-empty rows)
    double meanDistance = 0;   ///< mean over non-empty rows of sum_j w_ij |p - j|
    double firstTokenMass = 0; ///< mean over non-empty rows of w_i0 (attention sinks)
};
/// Summarises one head's HeadStats (unmasked weights).
HeadSummary summarizeHead(const HeadStats& stats, Index layer, Index head);
/// Every (layer, head) of batch b, layer-major, through headStats(). `threads` > 1 splits
/// the heads over worker threads (0 = hardware).
std::vector<HeadSummary> headStatisticsTable(const AttentionDump& dump, Index b, int threads = 1);

/// One (batch, layer) of a dump as an Experiment the views draw: attention.weights
/// [1, H, Sq, Sk], per-head stats, tokens. qkv carries shapes only ([1, H, S, 0], no data),
/// so headCount()/sq()/sk() hold and there is no q.k to explain.
Experiment dumpExperiment(const AttentionDump& dump, Index b, Index l);

/// How to re-run one real layer.
struct QkvApply {
    AttentionSpec spec;       ///< variant, mask, scale (weights/scores are always filled)
    Index kvHeads = 0;        ///< 0: as dumped; else share K/V in groups of Hkv/kvHeads
    double temperature = 1.0; ///< divides the scale
    /// A model's own per-layer sliding windows where its layers differ (Gemma 2 alternates):
    /// when not empty, layer l runs causal attention with window layerWindows[l] (-1: none,
    /// W: keys i - W < j <= i) in place of spec.mask. Empty once a mask is chosen by hand.
    std::vector<Index> layerWindows;
    /// Fill the experiment's attention.scores (another H x Sq x Sk); without them the views
    /// compute a head's q.k when they show it, and the run takes the fast kernels.
    bool keepScores = true;
    /// Hold no weights (a model's layer on a long text): each head's are computed here for its
    /// statistics, output and overview and let go, and Experiment::maps computes a head's again
    /// when a view asks, the same bytes. Memory: a head's Sq x Sk per thread, not H x Sq x Sk.
    /// No scores are kept (keepScores still chooses the kernel, as it does for a held layer).
    /// Train-mode dropout and a score bias depend on the head's index: with them every head is held
    /// as without this.
    bool weightsOnDemand = false;
    /// With weightsOnDemand: the head whose map is kept from the layer's run (the head on
    /// screen), so the first view to ask for it computes nothing; -1 keeps none.
    Index keptHead = -1;
};

/// Runs layer l of a Q/K/V dump through attend() under `apply` and returns the Experiment the
/// views draw (qkv filled, so tooltips explain q.k). kvHeads < the dump's Hkv mean-pools each
/// group of K/V heads into one (Ainslie et al. 2023, GQA uptraining); it must divide Hkv.
/// Throws InvalidArgument on a bad layer, kvHeads or mask.
Experiment applyToQkvLayer(const QkvDump& dump, Index l, const QkvApply& apply);

/// Every layer of `qkv` under `apply` as an attention dump [1, L, H, Sq, Sk] whose maps are
/// computed when asked, a head at a time: the bytes applyToQkvLayer gives under `apply`.
/// Memory: the last layer's pooled Q/K/V and one head's Sq x Sk.
AttentionDump appliedDump(std::shared_ptr<const QkvDump> qkv, const QkvApply& apply);

} // namespace attnlab
