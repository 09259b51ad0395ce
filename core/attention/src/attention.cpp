// attend(): validation, per-(batch, head) dispatch to the kernels, GQA wiring and threads.

#include "attnlab/attention/attention.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "attnlab/base/parallel.h"
#include "fast_attention.h"
#include "kernels.h"

namespace attnlab {

const char* variantName(Variant v) {
    switch (v) {
    case Variant::Softmax:
        return "softmax";
    case Variant::Flash:
        return "flash";
    case Variant::Linear:
        return "linear";
    case Variant::Additive:
        return "additive";
    }
    return "softmax";
}

std::optional<Variant> parseVariant(const std::string& name) {
    for (Variant v : {Variant::Softmax, Variant::Flash, Variant::Linear, Variant::Additive})
        if (name == variantName(v)) return v;
    return std::nullopt;
}

namespace {

template <typename T> Status validateT(const QkvT<T>& qkv, const AttentionSpec& spec) {
    const Tensor4T<T>& q = qkv.q;
    const Tensor4T<T>& k = qkv.k;
    const Tensor4T<T>& v = qkv.v;
    std::ostringstream out;
    auto shape = [](const Tensor4T<T>& t) {
        std::ostringstream s;
        s << "[" << t.batch << ", " << t.heads << ", " << t.seq << ", " << t.dim << "]";
        return s.str();
    };
    for (const auto& [name, t] :
         {std::pair<const char*, const Tensor4T<T>*>{"Q", &q}, {"K", &k}, {"V", &v}}) {
        if (t->data.size() != static_cast<std::size_t>(t->batch * t->heads * t->seq * t->dim))
            return Error{std::string(name) + " holds " + std::to_string(t->data.size()) +
                         " values but its shape " + shape(*t) + " needs " +
                         std::to_string(t->batch * t->heads * t->seq * t->dim)};
    }
    if (k.batch != q.batch || v.batch != q.batch) {
        out << "batch sizes differ: Q " << shape(q) << ", K " << shape(k) << ", V " << shape(v);
        return Error{out.str()};
    }
    if (v.heads != k.heads) {
        out << "K and V need the same number of heads: K " << shape(k) << ", V " << shape(v);
        return Error{out.str()};
    }
    if (v.seq != k.seq) {
        out << "K and V need the same sequence length: K " << shape(k) << ", V " << shape(v);
        return Error{out.str()};
    }
    if (k.dim != q.dim) {
        out << "Q and K need the same feature size D: Q " << shape(q) << ", K " << shape(k);
        return Error{out.str()};
    }
    if (q.heads > 0 && (k.heads <= 0 || q.heads % k.heads != 0)) {
        out << "query heads (" << q.heads << ") must be a multiple of key/value heads (" << k.heads
            << ")";
        return Error{out.str()};
    }
    if (q.heads == 0 && k.heads != 0) {
        out << "Q has no heads but K/V have " << k.heads;
        return Error{out.str()};
    }
    if (auto problem = validateMask(spec.mask, q.batch, q.seq, k.seq)) return problem;
    if (spec.scale && !std::isfinite(*spec.scale)) return Error{"scale must be finite"};
    if (spec.softcap && !(std::isfinite(*spec.softcap) && *spec.softcap > 0))
        return Error{"soft-capping must be a positive number"};
    if (spec.softcap && spec.variant != Variant::Softmax)
        return Error{"soft-capping runs with the softmax variant only"};
    if (spec.scoreBias) {
        if (spec.variant != Variant::Softmax || !std::is_same_v<T, float>)
            return Error{"a score bias runs with the float32 softmax variant only"};
        const Tensor4& bias = *spec.scoreBias;
        if ((bias.batch != 1 && bias.batch != q.batch) || bias.heads != q.heads ||
            bias.seq != q.seq || bias.dim != k.seq) {
            out << "the score bias must be [1 or B, H, Sq, Sk] = [" << q.batch << ", " << q.heads
                << ", " << q.seq << ", " << k.seq << "], not [" << bias.batch << ", "
                << bias.heads << ", " << bias.seq << ", " << bias.dim << "]";
            return Error{out.str()};
        }
    }
    if (spec.qBlock < 1)
        return Error{"q block size must be >= 1 (got " + std::to_string(spec.qBlock) + ")"};
    if (spec.kvBlock < 1)
        return Error{"kv block size must be >= 1 (got " + std::to_string(spec.kvBlock) + ")"};
    if (spec.threads < 0)
        return Error{"threads must be >= 0 (got " + std::to_string(spec.threads) + ")"};
    if (auto problem = validateDropoutRate(spec.dropout.rate)) return problem;
    if (spec.dropout.active() && spec.variant == Variant::Linear)
        return Error{"dropout needs the attention weights, which linear attention never "
                     "forms; use softmax, flash or additive"};
    if (spec.variant == Variant::Additive) {
        if (spec.additive) {
            const AdditiveParamsD& p = *spec.additive;
            if (p.wq.cols() != q.dim || p.wk.cols() != k.dim || p.wq.rows() != p.wk.rows() ||
                p.v.size() != p.wq.rows()) {
                out << "additive parameters do not fit: wq " << p.wq.rows() << "x" << p.wq.cols()
                    << ", wk " << p.wk.rows() << "x" << p.wk.cols() << ", v " << p.v.size()
                    << " for D = " << q.dim;
                return Error{out.str()};
            }
        } else if (spec.additiveUnits < 1) {
            return Error{"additive units must be >= 1 (got " + std::to_string(spec.additiveUnits) +
                         ")"};
        }
    }
    return std::nullopt;
}

} // namespace

Status validate(const Qkv& qkv, const AttentionSpec& spec) {
    return validateT(qkv, spec);
}
Status validate(const QkvD& qkv, const AttentionSpec& spec) {
    return validateT(qkv, spec);
}

namespace kernels {

template <typename T>
void prepareResult(const QkvT<T>& qkv, const AttentionSpec& spec, bool kernelWritesAll,
                   AttentionT<T>& result) {
    const Index batch = qkv.q.batch;
    const Index heads = qkv.q.heads;
    const Index sq = qkv.q.seq;
    const Index sk = qkv.k.seq;
    const Index dim = qkv.q.dim;
    result.scale =
        spec.scale ? *spec.scale : (dim > 0 ? 1.0 / std::sqrt(static_cast<double>(dim)) : 1.0);
    // Each tensor takes its shape in place, in the storage it has where that is large enough.
    // Zeros only where a kernel may leave a cell unwritten: the fast path writes every cell
    // of its output and weights (masked ones as 0), so its pages are first touched by the
    // threads that fill them instead of zeroed by this one.
    const auto shape = [&](Tensor4T<T>& t, Index s, Index d, bool zeros) {
        t.batch = batch;
        t.heads = heads;
        t.seq = s;
        t.dim = d;
        const auto size = static_cast<std::size_t>(batch * heads * s * d);
        if (zeros) {
            t.data.assign(size, T(0));
            return;
        }
        if (size > t.data.capacity()) t.data.clear(); // nothing to copy into a larger buffer
        t.data.resize(size);
    };
    shape(result.output, sq, qkv.v.dim, !kernelWritesAll);
    if (spec.wantWeights)
        shape(result.weights, sq, sk, !kernelWritesAll);
    else
        result.weights = Tensor4T<T>{};
    if (spec.wantScores)
        shape(result.scores, sq, sk, true);
    else
        result.scores = Tensor4T<T>{};
    result.emptyRows.assign(static_cast<std::size_t>(batch * sq), 0);
    result.flashTrace.reset();
}

template <typename T>
AttentionT<T> prepareResult(const QkvT<T>& qkv, const AttentionSpec& spec, bool kernelWritesAll) {
    AttentionT<T> result;
    prepareResult(qkv, spec, kernelWritesAll, result);
    return result;
}

template <typename T>
std::optional<AdditiveParamsT<T>> additiveParamsFor(const QkvT<T>& qkv, const AttentionSpec& spec) {
    if (spec.variant != Variant::Additive) return std::nullopt;
    if (spec.additive) return spec.additive->template cast<T>();
    return makeAdditiveParams(spec.additiveUnits, qkv.q.dim, qkv.k.dim, spec.additiveSeed)
        .template cast<T>();
}

template AttentionT<float> prepareResult(const QkvT<float>&, const AttentionSpec&, bool);
template AttentionT<double> prepareResult(const QkvT<double>&, const AttentionSpec&, bool);
template void prepareResult(const QkvT<float>&, const AttentionSpec&, bool, AttentionT<float>&);
template void prepareResult(const QkvT<double>&, const AttentionSpec&, bool, AttentionT<double>&);
template std::optional<AdditiveParamsT<float>> additiveParamsFor(const QkvT<float>&,
                                                                 const AttentionSpec&);
template std::optional<AdditiveParamsT<double>> additiveParamsFor(const QkvT<double>&,
                                                                  const AttentionSpec&);

} // namespace kernels

namespace {

/// Head (b, h)'s [Sq, Sk] score bias, or nullptr (validate() admits one only for float).
template <typename T> const T* scoreBiasOf(const AttentionSpec& spec, Index b, Index h) {
    if constexpr (std::is_same_v<T, float>) {
        if (!spec.scoreBias) return nullptr;
        const Tensor4& bias = *spec.scoreBias;
        return bias.head(bias.batch == 1 ? 0 : b, h).data();
    } else {
        return nullptr;
    }
}

template <typename T>
void attendT(const QkvT<T>& qkv, const AttentionSpec& spec, AttentionT<T>& result) {
    if (auto problem = validate(qkv, spec)) ATTN_CHECK(false, problem->message);
    const Index batch = qkv.q.batch;
    const Index heads = qkv.q.heads;
    const Index sq = qkv.q.seq;
    const Index sk = qkv.k.seq;

    const bool tracing = spec.wantFlashTrace && spec.variant == Variant::Flash;
    bool fast = false;
    if constexpr (std::is_same_v<T, float>) fast = kernels::fastPathServes(spec, tracing);
    kernels::prepareResult(qkv, spec, fast, result);
    if (tracing) {
        FlashTraceT<T> trace;
        trace.qBlock = spec.qBlock;
        trace.kvBlock = spec.kvBlock;
        trace.heads.resize(static_cast<std::size_t>(batch * heads));
        for (Index b = 0; b < batch; ++b)
            for (Index h = 0; h < heads; ++h) {
                trace.heads[static_cast<std::size_t>(b * heads + h)].batch = b;
                trace.heads[static_cast<std::size_t>(b * heads + h)].head = h;
            }
        result.flashTrace = std::move(trace);
    }
    if constexpr (std::is_same_v<T, float>)
        if (fast) {
            kernels::attendFast(qkv, spec, result);
            return;
        }
    const std::optional<AdditiveParamsT<T>> additive = kernels::additiveParamsFor(qkv, spec);

    const auto cells = static_cast<std::size_t>(sq * sk);
    const double workPerHead = static_cast<double>(sq) * static_cast<double>(sk) *
                               static_cast<double>(qkv.q.dim + qkv.v.dim);
    detail::parallelFor(batch * heads, spec.threads, workPerHead, [&](Index pair) {
        const Index b = pair / heads;
        const Index h = pair % heads;
        const Index kvHead = kvHeadOf(h, heads, qkv.k.heads);
        const auto slot = static_cast<std::size_t>(pair);
        std::optional<kernels::HeadDropout> dropout;
        if (spec.dropout.active()) dropout = kernels::HeadDropout{spec.dropout, h, 0};
        const kernels::HeadJobT<T> job{
            qkv.q.head(b, h), qkv.k.head(b, kvHead), qkv.v.head(b, kvHead),
            result.output.head(b, h),
            spec.wantWeights ? result.weights.data.data() + slot * cells : nullptr,
            spec.wantScores ? result.scores.data.data() + slot * cells : nullptr, spec.mask, b,
            static_cast<T>(result.scale),
            // The mask does not depend on the head: head 0 reports the empty rows.
            h == 0 ? result.emptyRows.data() + b * sq : nullptr, dropout ? &*dropout : nullptr,
            spec.softcap ? static_cast<T>(*spec.softcap) : T(0), scoreBiasOf<T>(spec, b, h)};
        kernels::runHead(job, spec, additive, tracing ? &result.flashTrace->heads[slot] : nullptr);
    });
}

} // namespace

Attention attend(const Qkv& qkv, const AttentionSpec& spec) {
    Attention result;
    attendT(qkv, spec, result);
    return result;
}
AttentionD attend(const QkvD& qkv, const AttentionSpec& spec) {
    AttentionD result;
    attendT(qkv, spec, result);
    return result;
}
void attend(const Qkv& qkv, const AttentionSpec& spec, Attention& into) {
    attendT(qkv, spec, into);
}
void attend(const QkvD& qkv, const AttentionSpec& spec, AttentionD& into) {
    attendT(qkv, spec, into);
}

Index attendRowBlock(const AttentionSpec& spec) {
    return kernels::fastPathServes(spec, spec.wantFlashTrace && spec.variant == Variant::Flash)
               ? kernels::fastPathRowBlock(spec)
               : 0;
}

} // namespace attnlab
