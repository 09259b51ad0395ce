// FlashWalk: one head's FlashAttention walk for the stepper (flash_walk.h). The recurrence is
// Dao et al. 2022, Alg. 1, in float like the flash kernel (flash.cpp); the reference is
// standard softmax attention in double.

#include "attnlab/attention/flash_walk.h"
#include "flash_tile.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnlab {

namespace {

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
constexpr Index kReferenceRows = 64; // rows per block of the double reference

Index ceilDiv(Index a, Index b) {
    return (a + b - 1) / b;
}

/// max_d |O - O_std| of row `row` where O = accumulator / l (0 when l == 0).
double rowError(const Matrix& accumulator, Index local, float rowSum, const MatrixD& reference,
                Index row) {
    double worst = 0;
    for (Index d = 0; d < reference.cols(); ++d) {
        const double o = rowSum > 0 ? static_cast<double>(accumulator(local, d)) / rowSum : 0.0;
        worst = std::max(worst, std::abs(o - reference(row, d)));
    }
    return worst;
}

} // namespace

FlashWalk::FlashWalk(const Matrix& q, const Matrix& k, const Matrix& v, const MaskSpec& mask,
                     Index batch, double scale, Index qBlock, Index kvBlock)
    : m_q(q), m_k(k), m_v(v), m_mask(mask), m_batch(batch), m_scale(static_cast<float>(scale)),
      m_referenceScale(scale), m_qBlock(qBlock), m_kvBlock(kvBlock) {
    ATTN_CHECK(qBlock >= 1 && kvBlock >= 1,
               "flash blocks must be at least 1 (got " << qBlock << " x " << kvBlock << ")");
    ATTN_CHECK(q.cols() == k.cols(), "q and k have different head dimensions ("
                                         << q.cols() << " and " << k.cols() << ")");
    ATTN_CHECK(k.rows() == v.rows(),
               "k and v have different lengths (" << k.rows() << " and " << v.rows() << ")");
    ATTN_CHECK(std::isfinite(scale), "the scale must be finite");
    if (auto problem = validateMask(mask, batch + 1, q.rows(), k.rows()))
        ATTN_CHECK(false, problem->message);
    walk();
}

bool FlashWalk::skippedAt(Index step) const {
    const auto bit = static_cast<std::size_t>(step);
    return (m_skipBits[bit / 64] >> (bit % 64)) & 1u;
}

FlashTile FlashWalk::tile(Index step) const {
    ATTN_CHECK(step >= 0 && step < totalSteps(),
               "step " << step << " outside [0, " << totalSteps() << ")");
    FlashTile out;
    const Index t = step / m_kvTiles;
    const Index j = step % m_kvTiles;
    out.qStart = t * m_qBlock;
    out.qEnd = std::min(sq(), out.qStart + m_qBlock);
    out.kvStart = j * m_kvBlock;
    out.kvEnd = std::min(sk(), out.kvStart + m_kvBlock);
    out.skipped = skippedAt(step);
    return out;
}

Index FlashWalk::skippedAmong(Index steps) const {
    steps = std::clamp<Index>(steps, 0, totalSteps());
    const auto word = static_cast<std::size_t>(steps / 64);
    if (word >= m_skipBits.size()) return m_skippedTotal;
    Index count = m_skipCountBefore[word];
    if (word < m_skipBits.size() && steps % 64 != 0) {
        const std::uint64_t low = m_skipBits[word] & ((std::uint64_t(1) << (steps % 64)) - 1);
        count += static_cast<Index>(__builtin_popcountll(low));
    }
    return count;
}

bool FlashWalk::tileHasAllowed(Index q0, Index br, Index k0, Index bc) const {
    std::vector<KeyRange> ranges;
    kernels::tileKeyRanges(m_mask, m_batch, q0, br, sq(), sk(), ranges);
    return kernels::tileHasAllowed(ranges, br, q0, k0, k0 + bc,
                                   m_mask.custom ? &*m_mask.custom : nullptr);
}

void FlashWalk::applyTile(Index q0, Index br, Index k0, Index bc, Matrix& accumulator,
                          std::vector<float>& rowMax, std::vector<float>& rowSum,
                          std::vector<float>* rescaleOut) const {
    // The kernel's own tile update (flash_tile.h) on this walk's state.
    thread_local Matrix scores;
    thread_local std::vector<KeyRange> ranges;
    thread_local std::vector<float> rescale, shift;
    scores.resize(br, bc);
    kernels::tileKeyRanges(m_mask, m_batch, q0, br, sq(), sk(), ranges);
    kernels::tileScores<float>(scores, m_scale, m_q.middleRows(q0, br), m_k.middleRows(k0, bc),
                               ranges, q0, k0, m_mask.custom ? &*m_mask.custom : nullptr);
    rescale.resize(static_cast<std::size_t>(br));
    shift.resize(static_cast<std::size_t>(br));
    using Rows = Eigen::Map<Array>;
    kernels::onlineSoftmaxUpdate<float>(scores, Rows(rowMax.data(), br), Rows(rowSum.data(), br),
                                        Rows(rescale.data(), br), Rows(shift.data(), br));
    kernels::accumulateTile(accumulator, Rows(rescale.data(), br), scores, m_v.middleRows(k0, bc));
    if (rescaleOut) rescaleOut->assign(rescale.begin(), rescale.end());
}

void FlashWalk::walk() {
    const Index rows = sq(), keys = sk(), dv = dimV();
    m_qTiles = rows == 0 || keys == 0 ? 0 : ceilDiv(rows, m_qBlock);
    m_kvTiles = keys == 0 ? 0 : ceilDiv(keys, m_kvBlock);
    const Index total = totalSteps();

    // The reference, 64 rows at a time: S = scale Q K^T, masked softmax, P V (double).
    m_reference = MatrixD::Zero(rows, dv);
    if (keys > 0) {
        const MatrixD kd = m_k.cast<double>();
        const MatrixD vd = m_v.cast<double>();
        MatrixD block;
        for (Index r0 = 0; r0 < rows; r0 += kReferenceRows) {
            const Index n = std::min(kReferenceRows, rows - r0);
            block.noalias() =
                m_referenceScale * (m_q.middleRows(r0, n).cast<double>() * kd.transpose());
            for (Index i = 0; i < n; ++i) {
                auto row = block.row(i);
                double best = -std::numeric_limits<double>::infinity();
                for (Index j = 0; j < keys; ++j)
                    if (allowed(m_mask, m_batch, r0 + i, j, rows, keys))
                        best = std::max(best, row(j));
                double sum = 0;
                for (Index j = 0; j < keys; ++j) {
                    const bool ok =
                        std::isfinite(best) && allowed(m_mask, m_batch, r0 + i, j, rows, keys);
                    row(j) = ok ? std::exp(row(j) - best) : 0.0;
                    sum += row(j);
                }
                if (sum > 0) row /= sum;
            }
            m_reference.middleRows(r0, n).noalias() = block * vd;
        }
    }
    // suffix[i] = max over rows >= i of max |O_std|: the error of rows not visited yet.
    std::vector<double> suffix(static_cast<std::size_t>(rows) + 1, 0.0);
    for (Index i = rows - 1; i >= 0; --i)
        suffix[static_cast<std::size_t>(i)] =
            std::max(suffix[static_cast<std::size_t>(i + 1)],
                     dv > 0 ? m_reference.row(i).cwiseAbs().maxCoeff() : 0.0);

    m_finalAccumulator = Matrix::Zero(rows, dv);
    m_finalMax.assign(static_cast<std::size_t>(rows), kMinusInf);
    m_finalSum.assign(static_cast<std::size_t>(rows), 0.0f);
    m_skipBits.assign(static_cast<std::size_t>(ceilDiv(total, 64)), 0);

    // Error samples: every step count when few, else kMaxErrorSamples + 1 evenly spaced.
    const Index samples = std::min(total, kMaxErrorSamples);
    Index nextSample = 0; // index i of the next sample, at step count i * total / samples
    auto sampleAt = [&](Index i) { return samples == 0 ? 0 : i * total / samples; };
    m_errors.clear();
    m_errors.push_back({0, suffix[0]});
    nextSample = 1;

    // Checkpoints: at most kMaxCheckpoints and kCheckpointBytes of tile states.
    const Index brMax = std::min(m_qBlock, std::max<Index>(rows, 1));
    const std::size_t perCheckpoint =
        static_cast<std::size_t>(brMax) * static_cast<std::size_t>(dv + 2) * sizeof(float) + 64;
    const Index maxCheckpoints =
        std::min<Index>(kMaxCheckpoints, static_cast<Index>(kCheckpointBytes / perCheckpoint));
    m_spacing = maxCheckpoints > 0 ? std::max<Index>(1, ceilDiv(total, maxCheckpoints + 1))
                                   : std::max<Index>(1, total + 1);
    m_checkpoints.clear();

    double doneError = 0; // the error of rows whose q tile is finished
    Matrix accumulator;
    std::vector<float> rowMax, rowSum;
    for (Index t = 0; t < m_qTiles; ++t) {
        const Index q0 = t * m_qBlock;
        const Index br = std::min(m_qBlock, rows - q0);
        accumulator.setZero(br, dv);
        rowMax.assign(static_cast<std::size_t>(br), kMinusInf);
        rowSum.assign(static_cast<std::size_t>(br), 0.0f);
        for (Index j = 0; j < m_kvTiles; ++j) {
            const Index step = t * m_kvTiles + j;
            const Index k0 = j * m_kvBlock;
            const Index bc = std::min(m_kvBlock, keys - k0);
            if (!tileHasAllowed(q0, br, k0, bc))
                m_skipBits[static_cast<std::size_t>(step / 64)] |= std::uint64_t(1) << (step % 64);
            else
                applyTile(q0, br, k0, bc, accumulator, rowMax, rowSum, nullptr);
            const Index done = step + 1;
            const bool lastOfTile = j + 1 == m_kvTiles;
            if (lastOfTile) {
                m_finalAccumulator.middleRows(q0, br) = accumulator;
                for (Index i = 0; i < br; ++i) {
                    const auto local = static_cast<std::size_t>(i);
                    m_finalMax[static_cast<std::size_t>(q0 + i)] = rowMax[local];
                    m_finalSum[static_cast<std::size_t>(q0 + i)] = rowSum[local];
                    doneError = std::max(
                        doneError, rowError(accumulator, i, rowSum[local], m_reference, q0 + i));
                }
            }
            if (nextSample <= samples && done == sampleAt(nextSample)) {
                double error = std::max(doneError, suffix[static_cast<std::size_t>(q0 + br)]);
                if (!lastOfTile)
                    for (Index i = 0; i < br; ++i)
                        error = std::max(error, rowError(accumulator, i,
                                                         rowSum[static_cast<std::size_t>(i)],
                                                         m_reference, q0 + i));
                m_errors.push_back({done, error});
                ++nextSample;
            }
            if (!lastOfTile && maxCheckpoints > 0 && done % m_spacing == 0 &&
                static_cast<Index>(m_checkpoints.size()) < maxCheckpoints)
                m_checkpoints.push_back({done, accumulator, rowMax, rowSum});
        }
    }

    m_skipCountBefore.assign(m_skipBits.size(), 0);
    Index count = 0;
    for (std::size_t w = 0; w < m_skipBits.size(); ++w) {
        m_skipCountBefore[w] = count;
        count += static_cast<Index>(__builtin_popcountll(m_skipBits[w]));
    }
    m_skippedTotal = count;
}

FlashState FlashWalk::stateAfter(Index steps) const {
    steps = std::clamp<Index>(steps, 0, totalSteps());
    const Index rows = sq(), dv = dimV();
    FlashState state;
    state.accumulator = Matrix::Zero(rows, dv);
    state.rowMax.assign(static_cast<std::size_t>(rows), kMinusInf);
    state.rowSum.assign(static_cast<std::size_t>(rows), 0.0f);
    state.stepsDone = steps;
    if (steps == 0) return state;
    const Index tilesDone = steps / m_kvTiles; // whole q tiles finished
    const Index partial = steps % m_kvTiles;   // kv tiles done in q tile tilesDone
    const Index doneRows = std::min(rows, tilesDone * m_qBlock);
    state.accumulator.topRows(doneRows) = m_finalAccumulator.topRows(doneRows);
    std::copy_n(m_finalMax.begin(), doneRows, state.rowMax.begin());
    std::copy_n(m_finalSum.begin(), doneRows, state.rowSum.begin());
    if (partial == 0) return state;

    const Index q0 = tilesDone * m_qBlock;
    const Index br = std::min(m_qBlock, rows - q0);
    const Index tileStart = tilesDone * m_kvTiles;
    Matrix accumulator = Matrix::Zero(br, dv);
    std::vector<float> rowMax(static_cast<std::size_t>(br), kMinusInf);
    std::vector<float> rowSum(static_cast<std::size_t>(br), 0.0f);
    Index from = tileStart;
    // The last checkpoint at or before `steps`, if it lies inside this q tile.
    const auto after = std::upper_bound(m_checkpoints.begin(), m_checkpoints.end(), steps,
                                        [](Index s, const TileState& c) { return s < c.step; });
    if (after != m_checkpoints.begin()) {
        const TileState& checkpoint = *std::prev(after);
        if (checkpoint.step > tileStart) {
            accumulator = checkpoint.accumulator;
            rowMax = checkpoint.rowMax;
            rowSum = checkpoint.rowSum;
            from = checkpoint.step;
        }
    }
    for (Index step = from; step < steps; ++step) {
        if (skippedAt(step)) continue;
        const Index k0 = (step - tileStart) * m_kvBlock;
        applyTile(q0, br, k0, std::min(m_kvBlock, sk() - k0), accumulator, rowMax, rowSum, nullptr);
    }
    state.accumulator.middleRows(q0, br) = accumulator;
    std::copy(rowMax.begin(), rowMax.end(), state.rowMax.begin() + q0);
    std::copy(rowSum.begin(), rowSum.end(), state.rowSum.begin() + q0);
    return state;
}

std::vector<FlashRowPoint> FlashWalk::rowHistory(Index row, Index steps) const {
    std::vector<FlashRowPoint> points;
    if (row < 0 || row >= sq() || m_kvTiles == 0) return points;
    steps = std::clamp<Index>(steps, 0, totalSteps());
    const Index t = row / m_qBlock;
    Matrix accumulator = Matrix::Zero(1, dimV());
    std::vector<float> rowMax{kMinusInf}, rowSum{0.0f}, rescale;
    for (Index j = 0; j < m_kvTiles; ++j) {
        const Index step = t * m_kvTiles + j;
        if (step >= steps) break;
        if (skippedAt(step)) continue;
        const Index k0 = j * m_kvBlock;
        applyTile(row, 1, k0, std::min(m_kvBlock, sk() - k0), accumulator, rowMax, rowSum,
                  &rescale);
        points.push_back({step + 1, rowMax[0], rowSum[0], rescale[0]});
    }
    return points;
}

std::size_t FlashWalk::bytes() const {
    auto floats = [](Index n) { return static_cast<std::size_t>(n) * sizeof(float); };
    std::size_t total = floats(m_q.size() + m_k.size() + m_v.size() + m_finalAccumulator.size()) +
                        floats(static_cast<Index>(m_finalMax.size() + m_finalSum.size())) +
                        static_cast<std::size_t>(m_reference.size()) * sizeof(double) +
                        m_skipBits.size() * sizeof(std::uint64_t) +
                        m_skipCountBefore.size() * sizeof(Index) +
                        m_errors.size() * sizeof(FlashErrorPoint);
    for (const TileState& c : m_checkpoints)
        total += floats(c.accumulator.size()) +
                 floats(static_cast<Index>(c.rowMax.size() + c.rowSum.size())) + sizeof(TileState);
    return total;
}

} // namespace attnlab
