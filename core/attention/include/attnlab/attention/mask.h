#pragma once
/// Attention masks (docs/architecture.md, "Contracts every part shares"). Query i of Sq sits
/// at absolute position p = i + (Sk - Sq) (bottom-right alignment). Every structured mask
/// allows a contiguous key interval per row, so a row's allowed keys are
/// [begin, end) intersected with an optional custom boolean matrix. All masks AND.

#include <optional>
#include <string>
#include <vector>

#include "attnlab/base/result.h"
#include "attnlab/base/tensor.h"

namespace attnlab {

struct MaskSpec {
    bool causal = false;              ///< key j allowed iff j <= p
    Index window = -1;                ///< >= 0: |p - j| <= window
    Index causalWindow = -1;          ///< >= 0: 0 <= p - j <= causalWindow
    std::vector<Index> validLen;      ///< per batch entry (one value broadcasts): j < validLen[b]
    std::optional<BoolMatrix> custom; ///< [Sq, Sk], true = allowed

    /// True when no mask is set at all (every key allowed).
    bool none() const {
        return !causal && window < 0 && causalWindow < 0 && validLen.empty() && !custom;
    }
};

/// Half-open interval of allowed keys [begin, end); empty when begin >= end.
struct KeyRange {
    Index begin = 0;
    Index end = 0;
    bool empty() const { return end <= begin; }
    Index size() const { return empty() ? 0 : end - begin; }
};

/// Checks a mask against the shapes it will be used with; returns a message naming the
/// problem (negative window, validLen count not 1 or B, custom shape not [Sq, Sk]).
Status validateMask(const MaskSpec& mask, Index batch, Index sq, Index sk);

/// `mask` as it applies to [Sq, Sk] scores: a custom mask of another shape (a dump re-run on
/// other tokens) does not apply and is left out; everything else is kept.
MaskSpec maskFor(MaskSpec mask, Index sq, Index sk);

/// The structured (interval) part of the mask for query row i of batch b; ignores `custom`.
KeyRange keyRange(const MaskSpec& mask, Index b, Index i, Index sq, Index sk);

/// Whether key j is allowed for query i of batch b, every mask included.
bool allowed(const MaskSpec& mask, Index b, Index i, Index j, Index sq, Index sk);

/// The full [Sq, Sk] boolean mask of batch b (true = allowed), for display and tests.
BoolMatrix denseMask(const MaskSpec& mask, Index b, Index sq, Index sk);

/// Number of allowed keys in row i of batch b.
Index allowedCount(const MaskSpec& mask, Index b, Index i, Index sq, Index sk);

/// Parses the CLI form "none|causal|padding|window|causal-window[,more]" into flags.
/// `window` and `validLen` come from their own options. Error names the bad word.
Status parseMaskKinds(const std::string& text, MaskSpec& mask, bool& wantsPadding,
                      bool& wantsWindow, bool& wantsCausalWindow);

} // namespace attnlab
