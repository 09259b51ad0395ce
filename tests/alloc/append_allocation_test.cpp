// Appending a token costs a token: the bytes a one-token append through the KV cache allocates
// while it runs, counted by wrapping the C allocator (this binary links with
// -Wl,--wrap=malloc,...; operator new and delete below go through the same malloc and free, so
// Eigen's buffers, std::vector's and Tensor4's are all counted). No timing: the test reads the
// peak of the bytes alive above what was alive when the append started.

// GCC pairs a replaced operator new with the free() inside the replaced operator delete.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <new>

#include "attnlab/model/attention_maps.h"
#include "attnlab/model/model.h"
#include "temp_dir.h"

namespace {

std::atomic<long long> g_live{0};
std::atomic<long long> g_peak{0};

void added(void* p) {
    if (!p) return;
    const long long now =
        g_live.fetch_add(static_cast<long long>(malloc_usable_size(p))) +
        static_cast<long long>(malloc_usable_size(p));
    long long peak = g_peak.load();
    while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
    }
}

void removed(void* p) {
    if (p) g_live.fetch_sub(static_cast<long long>(malloc_usable_size(p)));
}

} // namespace

extern "C" {
void* __real_malloc(std::size_t);
void __real_free(void*);
void* __real_calloc(std::size_t, std::size_t);
void* __real_realloc(void*, std::size_t);
void* __real_aligned_alloc(std::size_t, std::size_t);
int __real_posix_memalign(void**, std::size_t, std::size_t);

void* __wrap_malloc(std::size_t n) {
    void* p = __real_malloc(n);
    added(p);
    return p;
}
void __wrap_free(void* p) {
    removed(p);
    __real_free(p);
}
void* __wrap_calloc(std::size_t n, std::size_t size) {
    void* p = __real_calloc(n, size);
    added(p);
    return p;
}
void* __wrap_realloc(void* old, std::size_t n) {
    removed(old);
    void* p = __real_realloc(old, n);
    added(p ? p : (n == 0 ? nullptr : old)); // a failed realloc keeps the old block
    return p;
}
void* __wrap_aligned_alloc(std::size_t alignment, std::size_t n) {
    void* p = __real_aligned_alloc(alignment, n);
    added(p);
    return p;
}
int __wrap_posix_memalign(void** out, std::size_t alignment, std::size_t n) {
    const int status = __real_posix_memalign(out, alignment, n);
    if (status == 0) added(*out);
    return status;
}
}

// operator new and delete through malloc and free, so that the wrappers see them.
void* operator new(std::size_t n) {
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
    return ::operator new(n);
}
void* operator new(std::size_t n, std::align_val_t a) {
    void* p = nullptr;
    if (posix_memalign(&p, std::max(sizeof(void*), static_cast<std::size_t>(a)), n ? n : 1) == 0)
        return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t a) {
    return ::operator new(n, a);
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete[](void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
    std::free(p);
}

namespace attnlab::model {
namespace {

namespace fs = std::filesystem;

/// A copy of the tiny Qwen3 fixture (2 layers x 4 heads, head dim 8, RoPE) that accepts
/// `positions` tokens.
fs::path longQwen3(const test::TempDir& dir, Index positions) {
    const fs::path from = fs::path(ATTNLAB_SOURCE_DIR) / "tests/model/fixtures/qwen3_qknorm";
    fs::copy_file(from / "model.safetensors", dir.path() / "model.safetensors");
    nlohmann::json config;
    std::ifstream(from / "config.json") >> config;
    config["max_position_embeddings"] = positions;
    std::ofstream(dir.path() / "config.json") << config.dump();
    return dir.path();
}

/// Peak bytes alive above the start while `work` runs.
template <typename Fn> long long peakBytesOf(const Fn& work) {
    const long long start = g_live.load();
    g_peak.store(start);
    work();
    return g_peak.load() - start;
}

TEST(AppendAllocation, AppendingATokenAllocatesNothingTheSizeOfAMap) {
    const test::TempDir dir;
    auto model = loadModel(longQwen3(dir, 4096).string());
    ASSERT_TRUE(model.ok()) << model.error();
    const ModelConfig& c = model->config;
    RunOptions options;
    options.threads = 2;
    long long appendBytes[2] = {};
    const Index lengths[2] = {1024, 2048};
    for (int n = 0; n < 2; ++n) {
        const Index s = lengths[n];
        std::vector<std::int64_t> ids;
        for (Index i = 0; i < s; ++i)
            ids.push_back((i * 7 + 3) % c.vocab);
        auto prefix = runModel(*model, std::span(ids).first(static_cast<std::size_t>(s - 1)),
                               options);
        ASSERT_TRUE(prefix.ok()) << prefix.error();
        std::optional<ModelRun> appended;
        const long long before = g_live.load();
        appendBytes[n] = peakBytesOf([&] { appended = std::move(*runModel(*model, ids, options, &*prefix)); });
        ASSERT_TRUE(appended && appended->extended);
        // The appended run shares the prefix's cache: it holds the new token's q/k/v rows and
        // its own final hidden states, not a second copy of every layer's q, k and v.
        const long long qkv = static_cast<long long>(
            sizeof(float) *
            static_cast<std::size_t>(c.layers * (c.heads + 2 * c.kvHeads) * s * c.headDim));
        EXPECT_LT(g_live.load() - before, qkv / 2)
            << s << " tokens: the appended run holds " << g_live.load() - before
            << " bytes beside the prefix; a copy of its q/k/v would be " << qkv;
        // What the appended run holds is linear in S: q, k, v and the final hidden states.
        const long long kept = static_cast<long long>(
            sizeof(float) * static_cast<std::size_t>(c.layers * (c.heads + 2 * c.kvHeads) * s *
                                                         c.headDim +
                                                     s * c.hidden));
        const long long oneMap = static_cast<long long>(sizeof(float)) * s * s;
        EXPECT_LT(appendBytes[n], oneMap / 2)
            << s << " tokens: the append allocated " << appendBytes[n]
            << " bytes at its peak; one head's map is " << oneMap << ", the run keeps " << kept;
        // ... and a map on demand costs one map, not every layer's.
        const long long mapBytes =
            peakBytesOf([&] { (void)attentionMap(*model, *appended, 1, 2, AttentionOf::Self, 2); });
        EXPECT_LT(mapBytes, 2 * oneMap) << s << " tokens";
        EXPECT_GE(mapBytes, oneMap) << s << " tokens: the map itself is S x S floats";
    }
    // Twice the text: about twice the append's bytes (linear), not four times (quadratic).
    EXPECT_LT(static_cast<double>(appendBytes[1]), 2.6 * static_cast<double>(appendBytes[0]))
        << appendBytes[0] << " then " << appendBytes[1] << " bytes";
}

} // namespace
} // namespace attnlab::model
