// A layer's cached heads as shared blocks of positions (model.h, HeadCache).

#include "attnlab/base/check.h"
#include "attnlab/model/model.h"

namespace attnlab::model {

HeadCache::HeadCache(Tensor4 t)
    : m_heads(t.heads), m_seq(t.seq), m_dim(t.dim) {
    ATTN_CHECK(t.batch == 1 || t.empty(), "a head cache holds batch 1, got " << t.batch);
    if (m_seq > 0)
        m_blocks.push_back({std::make_shared<const Tensor4>(std::move(t)), 0, m_seq});
}

HeadCache HeadCache::extended(const HeadCache& previous, Index keep, Tensor4 fresh) {
    ATTN_CHECK(keep >= 0 && keep <= previous.m_seq,
               "a cache of " << previous.m_seq << " positions cannot lend " << keep);
    ATTN_CHECK(previous.m_seq == 0 ||
                   (fresh.heads == previous.m_heads && fresh.dim == previous.m_dim),
               "fresh heads [" << fresh.heads << ", " << fresh.dim << "] do not match the cache's ["
                               << previous.m_heads << ", " << previous.m_dim << "]");
    HeadCache out;
    out.m_heads = fresh.heads;
    out.m_dim = fresh.dim;
    for (const Block& block : previous.m_blocks) {
        if (block.begin >= keep) break;
        Block shared = block;
        shared.rows = std::min(block.rows, keep - block.begin);
        out.m_blocks.push_back(std::move(shared));
    }
    const Index rows = fresh.seq;
    if (rows > 0)
        out.m_blocks.push_back({std::make_shared<const Tensor4>(std::move(fresh)), keep, rows});
    out.m_seq = keep + rows;
    return out;
}

Matrix HeadCache::headRows(Index h, Index begin, Index count) const {
    ATTN_CHECK(h >= 0 && h < m_heads, "head " << h << " outside the cache's " << m_heads);
    ATTN_CHECK(begin >= 0 && count >= 0 && begin + count <= m_seq,
               "rows [" << begin << ", " << begin + count << ") outside the cache's " << m_seq);
    Matrix out(count, m_dim);
    const Index end = begin + count;
    for (const Block& block : m_blocks) {
        const Index lo = std::max(begin, block.begin);
        const Index hi = std::min(end, block.begin + block.rows);
        if (lo >= hi) continue;
        out.middleRows(lo - begin, hi - lo) =
            block.data->head(0, h).middleRows(lo - block.begin, hi - lo);
    }
    return out;
}

Tensor4 HeadCache::tensor() const {
    Tensor4 out;
    tensorInto(out);
    return out;
}

void HeadCache::tensorInto(Tensor4& out) const {
    out.batch = 1;
    out.heads = m_heads;
    out.seq = m_seq;
    out.dim = m_dim;
    // The blocks cover every position: each element is written below.
    out.data.resize(static_cast<std::size_t>(m_heads * m_seq * m_dim));
    for (const Block& block : m_blocks)
        for (Index h = 0; h < m_heads; ++h)
            out.head(0, h).middleRows(block.begin, block.rows) =
                block.data->head(0, h).topRows(block.rows);
}

std::size_t HeadCache::floats() const {
    std::size_t total = 0;
    for (const Block& block : m_blocks)
        total += block.data->data.size();
    return total;
}

} // namespace attnlab::model
