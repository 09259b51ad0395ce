// KV-cache decoding: equal to full causal attention for every prefill size, the cache's byte
// counts for MHA, GQA and MQA, and the trace JSON.

#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "attnlab/attention/kv_cache.h"
#include "reference.h"

namespace attnlab {
namespace {

TEST(KvCache, EqualsFullCausalAttentionForEveryPrefill) {
    const Index s = 9;
    Qkv qkv{ref::randomTensor(2, 4, s, 4, 1), ref::randomTensor(2, 2, s, 4, 2),
            ref::randomTensor(2, 2, s, 3, 3)};
    MaskSpec causal;
    causal.causal = true;
    for (Variant variant : {Variant::Softmax, Variant::Flash})
        for (Index prefill : {Index(0), Index(1), Index(4), s - 1, s}) {
            AttentionSpec spec;
            spec.variant = variant;
            spec.qBlock = 2;
            spec.kvBlock = 3;
            spec.threads = 2;
            KvCacheTrace trace;
            const Attention a = attendKvCache(qkv, spec, prefill, 4, &trace);
            SCOPED_TRACE(std::string(variantName(variant)) + " prefill " + std::to_string(prefill));
            for (Index b = 0; b < 2; ++b)
                for (Index h = 0; h < 4; ++h) {
                    const auto r = ref::attention(qkv.q.head(b, h), qkv.k.head(b, h / 2),
                                                  qkv.v.head(b, h / 2), causal, b);
                    EXPECT_MATRIX_NEAR(a.output.head(b, h), r.output, 1e-5);
                    EXPECT_MATRIX_NEAR(
                        ConstMatrixMap(a.weights.data.data() + (b * 4 + h) * s * s, s, s),
                        r.weights, 1e-6);
                }
            // One prefill step, then one per decoded row.
            EXPECT_EQ(trace.prefill, prefill);
            ASSERT_EQ(static_cast<Index>(trace.steps.size()), 1 + s - prefill);
            EXPECT_EQ(trace.steps[0].newRows, prefill);
            EXPECT_EQ(trace.steps[0].cacheLen, prefill);
            for (std::size_t n = 1; n < trace.steps.size(); ++n) {
                EXPECT_EQ(trace.steps[n].newRows, 1);
                EXPECT_EQ(trace.steps[n].cacheLen, prefill + static_cast<Index>(n));
            }
        }
}

TEST(KvCache, KeepsTheOtherMasks) {
    const Index s = 8;
    Qkv qkv{ref::randomTensor(1, 1, s, 3, 11), ref::randomTensor(1, 1, s, 3, 12),
            ref::randomTensor(1, 1, s, 2, 13)};
    AttentionSpec spec;
    spec.mask.causalWindow = 2;
    spec.mask.validLen = {6};
    spec.mask.custom = ref::randomMask(s, s, 14, 0.7);
    MaskSpec full = spec.mask;
    full.causal = true;
    const auto r = ref::attention(qkv.q.head(0, 0), qkv.k.head(0, 0), qkv.v.head(0, 0), full, 0);
    for (Index prefill : {Index(0), Index(3), s}) {
        const Attention a = attendKvCache(qkv, spec, prefill, 4, nullptr);
        EXPECT_MATRIX_NEAR(a.output.head(0, 0), r.output, 1e-5);
        EXPECT_MATRIX_NEAR(ConstMatrixMap(a.weights.data.data(), s, s), r.weights, 1e-6);
        for (Index i = 0; i < s; ++i)
            EXPECT_EQ(a.emptyRows[static_cast<std::size_t>(i)],
                      r.emptyRow[static_cast<std::size_t>(i)]);
    }
}

TEST(KvCache, ByteCountsForMhaGqaMqa) {
    // batch 2, 8 query heads, D = Dv = 64, float32: every cached position of every kv head
    // holds 64 + 64 floats = 512 bytes.
    EXPECT_EQ(kvCacheBytes(2, 8, 100, 64, 64, 4), 2 * 8 * 100 * 512);
    EXPECT_EQ(kvCacheBytes(2, 2, 100, 64, 64, 4), 2 * 2 * 100 * 512); // GQA: a quarter
    EXPECT_EQ(kvCacheBytes(2, 1, 100, 64, 64, 4), 2 * 1 * 100 * 512); // MQA: an eighth
    EXPECT_EQ(kvCacheBytes(1, 1, 10, 3, 5, 8), 10 * 8 * 8);
    EXPECT_EQ(kvCacheBytes(1, 1, 0, 3, 5, 8), 0);
    // Large enough to need 64 bits: 32 * 64 * 131072 * 256 * 2 bytes = 128 GiB.
    EXPECT_EQ(kvCacheBytes(32, 64, 131072, 128, 128, 2), std::int64_t(137438953472));

    const Index s = 5;
    for (const auto& [kvHeads, bytesPerPosition] :
         {std::pair<Index, std::int64_t>{8, 2 * 8 * (4 + 2) * 4},
          {2, 2 * 2 * (4 + 2) * 4},
          {1, 2 * 1 * (4 + 2) * 4}}) {
        Qkv qkv{ref::randomTensor(2, 8, s, 4, 21), ref::randomTensor(2, kvHeads, s, 4, 22),
                ref::randomTensor(2, kvHeads, s, 2, 23)};
        KvCacheTrace trace;
        attendKvCache(qkv, AttentionSpec{}, 2, 4, &trace);
        ASSERT_EQ(trace.steps.size(), 4u);
        for (const KvCacheStep& step : trace.steps)
            EXPECT_EQ(step.cacheBytes, bytesPerPosition * step.cacheLen) << kvHeads;
    }
}

TEST(KvCache, TraceJson) {
    KvCacheTrace trace;
    trace.prefill = 2;
    trace.steps = {{2, 2, 96}, {1, 3, 144}};
    const auto json = nlohmann::json::parse(kvCacheTraceJson(trace));
    EXPECT_EQ(json["prefill"], 2);
    ASSERT_EQ(json["steps"].size(), 2u);
    EXPECT_EQ(json["steps"][0]["new_rows"], 2);
    EXPECT_EQ(json["steps"][0]["cache_len"], 2);
    EXPECT_EQ(json["steps"][0]["cache_bytes"], 96);
    EXPECT_EQ(json["steps"][1]["new_rows"], 1);
    EXPECT_EQ(json["steps"][1]["cache_len"], 3);
    EXPECT_EQ(json["steps"][1]["cache_bytes"], 144);
}

TEST(KvCache, RejectsWhatItCannotDecode) {
    Qkv cross{ref::randomTensor(1, 1, 3, 2, 1), ref::randomTensor(1, 1, 4, 2, 2),
              ref::randomTensor(1, 1, 4, 2, 3)};
    EXPECT_THROW(attendKvCache(cross, AttentionSpec{}, 0, 4, nullptr), InvalidArgument);
    Qkv self{ref::randomTensor(1, 1, 3, 2, 1), ref::randomTensor(1, 1, 3, 2, 2),
             ref::randomTensor(1, 1, 3, 2, 3)};
    EXPECT_THROW(attendKvCache(self, AttentionSpec{}, -1, 4, nullptr), InvalidArgument);
    EXPECT_THROW(attendKvCache(self, AttentionSpec{}, 4, 4, nullptr), InvalidArgument);
    AttentionSpec bad;
    bad.mask.window = -2;
    EXPECT_THROW(attendKvCache(self, bad, 1, 4, nullptr), InvalidArgument);
}

TEST(KvCache, EmptySequence) {
    Qkv qkv{Tensor4(1, 2, 0, 4), Tensor4(1, 2, 0, 4), Tensor4(1, 2, 0, 4)};
    KvCacheTrace trace;
    const Attention a = attendKvCache(qkv, AttentionSpec{}, 0, 4, &trace);
    EXPECT_TRUE(a.output.empty());
    ASSERT_EQ(trace.steps.size(), 1u);
    EXPECT_EQ(trace.steps[0].cacheBytes, 0);
}

} // namespace
} // namespace attnlab
