#include "attnlab/attention/mask.h"

#include <algorithm>
#include <limits>
#include <sstream>

namespace attnlab {

Status validateMask(const MaskSpec& mask, Index batch, Index sq, Index sk) {
    if (mask.window < -1)
        return Error{"window must be >= 0 (got " + std::to_string(mask.window) + ")"};
    if (mask.causalWindow < -1)
        return Error{"causal window must be >= 0 (got " + std::to_string(mask.causalWindow) + ")"};
    if (!mask.validLen.empty()) {
        const auto count = static_cast<Index>(mask.validLen.size());
        if (count != 1 && count != batch) {
            std::ostringstream out;
            out << "valid length needs 1 or " << batch << " values (one per batch entry), got "
                << count;
            return Error{out.str()};
        }
        for (Index len : mask.validLen)
            if (len < 0)
                return Error{"valid length must be >= 0 (got " + std::to_string(len) + ")"};
    }
    if (mask.custom && (mask.custom->rows() != sq || mask.custom->cols() != sk)) {
        std::ostringstream out;
        out << "custom mask is " << mask.custom->rows() << "x" << mask.custom->cols()
            << " but the scores are " << sq << "x" << sk;
        return Error{out.str()};
    }
    return std::nullopt;
}

MaskSpec maskFor(MaskSpec mask, Index sq, Index sk) {
    if (mask.custom && (mask.custom->rows() != sq || mask.custom->cols() != sk))
        mask.custom.reset();
    return mask;
}

namespace {

/// a + b, clamped to Index's range instead of overflowing: a window of 2^63 - 1 reaches
/// every key, it does not wrap around to mask them all.
Index addSaturating(Index a, Index b) {
    Index sum;
    if (!__builtin_add_overflow(a, b, &sum)) return sum;
    return b > 0 ? std::numeric_limits<Index>::max() : std::numeric_limits<Index>::min();
}

Index subtractSaturating(Index a, Index b) {
    Index difference;
    if (!__builtin_sub_overflow(a, b, &difference)) return difference;
    return b > 0 ? std::numeric_limits<Index>::min() : std::numeric_limits<Index>::max();
}

} // namespace

KeyRange keyRange(const MaskSpec& mask, Index b, Index i, Index sq, Index sk) {
    const Index p = addSaturating(i, subtractSaturating(sk, sq));
    const Index next = addSaturating(p, 1);
    Index begin = 0;
    Index end = sk;
    if (mask.causal) end = std::min(end, next);
    if (mask.window >= 0) {
        begin = std::max(begin, subtractSaturating(p, mask.window));
        end = std::min(end, addSaturating(next, mask.window));
    }
    if (mask.causalWindow >= 0) {
        begin = std::max(begin, subtractSaturating(p, mask.causalWindow));
        end = std::min(end, next);
    }
    if (!mask.validLen.empty()) {
        const Index len = mask.validLen.size() == 1 ? mask.validLen.front()
                                                    : mask.validLen[static_cast<std::size_t>(b)];
        end = std::min(end, len);
    }
    begin = std::clamp<Index>(begin, 0, sk);
    end = std::clamp<Index>(end, 0, sk);
    return {begin, std::max(begin, end)};
}

bool allowed(const MaskSpec& mask, Index b, Index i, Index j, Index sq, Index sk) {
    const KeyRange range = keyRange(mask, b, i, sq, sk);
    if (j < range.begin || j >= range.end) return false;
    return !mask.custom || (*mask.custom)(i, j);
}

BoolMatrix denseMask(const MaskSpec& mask, Index b, Index sq, Index sk) {
    BoolMatrix dense = BoolMatrix::Constant(sq, sk, false);
    for (Index i = 0; i < sq; ++i) {
        const KeyRange range = keyRange(mask, b, i, sq, sk);
        dense.row(i).segment(range.begin, range.size()).setConstant(true);
    }
    if (mask.custom) dense = dense.array() && mask.custom->array();
    return dense;
}

Index allowedCount(const MaskSpec& mask, Index b, Index i, Index sq, Index sk) {
    const KeyRange range = keyRange(mask, b, i, sq, sk);
    if (!mask.custom) return range.size();
    return mask.custom->row(i).segment(range.begin, range.size()).count();
}

Status parseMaskKinds(const std::string& text, MaskSpec& mask, bool& wantsPadding,
                      bool& wantsWindow, bool& wantsCausalWindow) {
    wantsPadding = wantsWindow = wantsCausalWindow = false;
    std::stringstream stream(text);
    std::string word;
    bool any = false;
    while (std::getline(stream, word, ',')) {
        any = true;
        if (word == "none") continue;
        if (word == "causal")
            mask.causal = true;
        else if (word == "padding")
            wantsPadding = true;
        else if (word == "window")
            wantsWindow = true;
        else if (word == "causal-window")
            wantsCausalWindow = true;
        else
            return Error{"unknown mask '" + word +
                         "' (expected none, causal, padding, window or causal-window)"};
    }
    if (!any) return Error{"--mask needs a value"};
    return std::nullopt;
}

} // namespace attnlab
