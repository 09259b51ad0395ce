// attnlab bench: times each attention variant and, in the same run, the machine's own
// references (Eigen GEMM on the same shapes, an FMA peak loop on each kernel target the CPU
// runs), and prints both.

// GCC 12 reports a false -Wuninitialized inside Eigen's AVX-512 intrinsics here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <iostream>
#include <new>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "attnlab/attention/attention.h"
#include "attnlab/base/isa.h"
#include "attnlab/base/simd_kernels.h"
#include "attnlab/base/threads.h"
#include "attnlab/model/attention_maps.h"
#include "attnlab/model/model.h"
#include "attnlab/model/text_run.h"
#include "cli_options.h"
#include "commands.h"

namespace attnlab::app {
namespace {

struct BenchOptions {
    std::vector<Index> sizes = {1024, 4096};
    Index dim = 64;
    Index heads = 8;
    int repeats = 5;
    int threads = 1;
    Index qBlock = 64;
    Index kvBlock = 64;
    bool help = false;
    std::string model; ///< --model DIR: time a real checkpoint instead of the kernels
    Index tokens = 128;
    bool logits = false; ///< --logits: every position's logits in the forward
};

void printHelp() {
    std::cout
        << "usage: attnlab bench [--sizes 1024,4096] [--dim 64] [--heads 8] [--repeats 5]\n"
           "                     [--threads 1] [--q-block-size 64] [--block-size 64]\n"
           "Times softmax, flash, causal flash and linear attention (batch 1, Sq = Sk = S,\n"
           "D = Dv = dim) and, in the same run, Eigen GEMMs on the same shapes and an FMA\n"
           "peak loop. FLOPs: 4 S^2 D H for full attention (QK^T and PV, a multiply-add is\n"
           "2); causal counts the S(S+1)/2 pairs it needs; linear counts its own 4 S D^2 H.\n"
           "Times are medians over the repeats after one warm-up run. Float softmax and\n"
           "flash take the fast path, which picks its own tiles; the block sizes shape\n"
           "the generic kernels (flash traces, float64, dropout, custom masks).\n"
           "The FMA loop runs on each kernel target the CPU has (avx512, avx2, generic);\n"
           "\"vs peak\" is of the widest. ATTNLAB_ISA=avx512|avx2|generic forces a target.\n"
           "\n"
           "attnlab bench --model DIR [--tokens 128] [--threads N] [--repeats 5] [--logits]\n"
           "Times a real checkpoint (docs/models.md): loading, the forward on that many\n"
           "random ids, appending one token through the KV cache, one head's whole attention\n"
           "map computed on demand (a middle layer and head), and the peak memory;\n"
           "the forward's rate is printed with its share of the FMA peak, by the wall\n"
           "clock and per second of CPU time (steadier on a machine others use).\n"
           "--logits: the forward computes every position's logits too, as `attnlab model\n"
           "--logits` does (its FLOPs count the lm head's 2 S d V).\n";
}

constexpr OptionSpec kOptions[] = {
    {"sizes", true},   {"dim", true},        {"heads", true},        {"repeats", true},
    {"threads", true}, {"block-size", true}, {"q-block-size", true}, {"help", false},
    {"model", true},   {"tokens", true},     {"logits", false},
};

/// The options of the command line over the defaults; throws CommandError on bad input.
BenchOptions parseOptions(int argc, char** argv) {
    const Arguments args = parseArguments(argc, argv, kOptions, "bench");
    BenchOptions options;
    if (auto text = get(args, "sizes")) {
        options.sizes.clear();
        std::stringstream stream(*text);
        std::string item;
        while (std::getline(stream, item, ','))
            options.sizes.push_back(parseAtLeast(item, "--sizes", 1));
        if (options.sizes.empty()) fail("--sizes needs at least one size");
    }
    if (auto text = get(args, "dim")) options.dim = parseAtLeast(*text, "--dim", 1);
    if (auto text = get(args, "heads")) options.heads = parseAtLeast(*text, "--heads", 1);
    if (auto text = get(args, "repeats"))
        options.repeats =
            static_cast<int>(std::min<Index>(parseAtLeast(*text, "--repeats", 1), 1000));
    if (auto text = get(args, "threads"))
        options.threads =
            static_cast<int>(std::min<Index>(parseAtLeast(*text, "--threads", 0), 1024));
    if (auto text = get(args, "block-size"))
        options.kvBlock = parseAtLeast(*text, "--block-size", 1);
    if (auto text = get(args, "q-block-size"))
        options.qBlock = parseAtLeast(*text, "--q-block-size", 1);
    options.help = args.count("help") > 0;
    if (auto dir = get(args, "model")) options.model = modelFolder(*dir);
    if (auto text = get(args, "tokens")) options.tokens = parseAtLeast(*text, "--tokens", 1);
    options.logits = args.count("logits") > 0;
    if (options.logits && options.model.empty())
        fail("--logits times a model's forward: it needs --model DIR");
    return options;
}

/// Median wall time in seconds of `repeats` runs of `work`, after one warm-up run; with
/// `cpuPerRun`, also the process's CPU time (every thread's) per timed run, which other
/// programs on a shared machine disturb far less than the wall time.
double medianSeconds(int repeats, const std::function<void()>& work, double* cpuPerRun = nullptr) {
    work();
    std::vector<double> times;
    const std::clock_t cpuStart = std::clock();
    for (int r = 0; r < repeats; ++r) {
        const auto start = std::chrono::steady_clock::now();
        work();
        times.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    if (cpuPerRun)
        *cpuPerRun = static_cast<double>(std::clock() - cpuStart) / CLOCKS_PER_SEC / repeats;
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

/// Runs task(worker) on `workers` threads at once (the caller is worker 0).
void onWorkers(int workers, const std::function<void(int)>& task) {
    std::vector<std::thread> pool;
    for (int w = 1; w < workers; ++w)
        pool.emplace_back(task, w);
    task(0);
    for (auto& t : pool)
        t.join();
}

/// An FMA loop's rate: by the wall clock (GFLOP/s of `workers` threads at once) and per
/// second of CPU time (GFLOP/s of one busy core).
struct FmaRate {
    double wall = 0;
    double perCpuSecond = 0;
};

/// Iterations of `kernels`' FMA loop that take about 80 ms on one thread: doubled from a small
/// count until a run takes 8 ms, then scaled. A fixed count would take ~60 ms on a desktop
/// core and a minute in a sanitized build, where every accumulator lives in memory.
long fmaIterationsFor(const simd::Kernels& kernels) {
    constexpr double kTarget = 0.08, kEnough = 0.008;
    float sink = 0;
    long iterations = 1 << 12;
    for (;;) {
        const auto start = std::chrono::steady_clock::now();
        kernels.fmaLoop(iterations, &sink);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (seconds >= kEnough)
            return std::max(1L, static_cast<long>(static_cast<double>(iterations) * kTarget / seconds));
        iterations *= 2;
    }
}

/// `workers` threads running the FMA loop of `isa`'s kernels at once (independent accumulators,
/// so the FMA latency is hidden).
FmaRate fmaPeak(Isa isa, int workers, int repeats) {
    const simd::Kernels& kernels = simd::kernelsFor(isa);
    const long iterations = fmaIterationsFor(kernels);
    std::vector<float> sinks(static_cast<std::size_t>(workers));
    double flops = 0;
    double cpu = 0;
    const double seconds = medianSeconds(
        repeats,
        [&] {
            std::vector<double> done(static_cast<std::size_t>(workers));
            onWorkers(workers, [&](int w) {
                done[static_cast<std::size_t>(w)] =
                    kernels.fmaLoop(iterations, &sinks[static_cast<std::size_t>(w)]);
            });
            flops = 0;
            for (double d : done)
                flops += d;
        },
        &cpu);
    return {flops / seconds * 1e-9, cpu > 0 ? flops / cpu * 1e-9 : 0.0};
}

/// Prints the FMA loop's rate on every target this CPU runs, widest first, and returns the
/// widest's: the peak the percentages are of.
FmaRate printFmaPeaks(int workers, int repeats) {
    std::printf("FMA peak loop (%d thread%s):", workers, workers > 1 ? "s" : "");
    FmaRate widest;
    for (auto it = std::rbegin(kAllIsas); it != std::rend(kAllIsas); ++it) {
        if (!isaSupported(*it)) continue;
        const FmaRate rate = fmaPeak(*it, workers, repeats);
        if (widest.wall == 0) widest = rate;
        std::printf("  %s %.1f GFLOP/s", std::string(isaName(*it)).c_str(), rate.wall);
    }
    std::printf("  (peak = %s)\n", std::string(isaName(bestIsa())).c_str());
    return widest;
}

/// The kernel target line: which one runs, and why when ATTNLAB_ISA was not honoured.
void printKernelTarget() {
    std::printf("kernels: %s (this CPU runs", std::string(isaName(activeIsa())).c_str());
    for (Isa isa : kAllIsas)
        if (isaSupported(isa)) std::printf(" %s", std::string(isaName(isa)).c_str());
    std::printf("; ATTNLAB_ISA chooses)\n");
    if (auto problem = isaOverrideProblem())
        std::fprintf(stderr, "attnlab bench: %s\n", std::string(*problem).c_str());
}

Tensor4 randomTensor(Index heads, Index seq, Index dim, std::uint32_t seed) {
    Tensor4 t(1, heads, seq, dim);
    std::mt19937 gen(seed);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (auto& x : t.data)
        x = dist(gen);
    return t;
}

/// `bench --model`: loading, a full forward and a one-token extension of a real checkpoint.
int benchModel(const BenchOptions& options, int workers) {
    const auto start = std::chrono::steady_clock::now();
    model::LoadOptions load;
    load.touchPages = true; // so the forward's time does not include reading the file
    auto loaded = model::loadModel(options.model, load);
    if (!loaded) fail(loaded.error());
    const double loadSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const model::Model& net = *loaded;
    const model::ModelConfig& c = net.config;
    const Index count = std::min(options.tokens, c.maxPositions);
    std::mt19937 gen(1);
    std::uniform_int_distribution<std::int64_t> pick(0, c.vocab - 1);
    std::vector<std::int64_t> ids(static_cast<std::size_t>(count));
    for (auto& id : ids)
        id = pick(gen);
    model::RunOptions run;
    run.threads = workers;
    if (options.logits) run.logits = model::LogitRows::All;
    if (auto problem = model::validateRun(c, ids, run)) fail(problem->message);
    double forwardCpu = 0;
    // The text's run as the window and `attnlab model` make it (text_run.h), the attention's
    // share of each forward timed apart.
    std::vector<double> attentionShares;
    const double forward = medianSeconds(
        options.repeats,
        [&] {
            double attentionSeconds = 0;
            model::RunOptions timed = run;
            timed.attentionSeconds = &attentionSeconds;
            const auto runStart = std::chrono::steady_clock::now();
            (void)model::runText(net, ids, model::TextRunOptions{timed, {}});
            attentionShares.push_back(
                attentionSeconds /
                std::chrono::duration<double>(std::chrono::steady_clock::now() - runStart).count());
        },
        &forwardCpu);
    std::sort(attentionShares.begin(), attentionShares.end());
    const double attention = forward * attentionShares[attentionShares.size() / 2];
    const model::TextRunOptions text{run, {}};
    auto prefix = model::runText(net, std::span(ids).first(ids.size() - 1), text);
    if (!prefix) fail(prefix.error());
    const double append =
        count > 1 ? medianSeconds(options.repeats,
                                  [&] { (void)model::runText(net, ids, text, &prefix->run); })
                  : forward;
    // One head's whole map, computed on demand from the run's q and k (attention_maps.h), of
    // the run the append produced: a middle layer and head.
    auto appendedText = model::runText(net, ids, text, count > 1 ? &prefix->run : nullptr);
    if (!appendedText) fail(appendedText.error());
    const model::ModelRun* appended = &appendedText->run;
    // The appended run shares the prefix's q/k/v blocks; what the prefix holds alone (its final
    // hidden states) goes, as the window keeps only the run it shows.
    *prefix = model::TextRun{};
    const Index mapLayer = c.layers / 2;
    const Index mapHead = c.heads / 2;
    const double map = medianSeconds(options.repeats, [&] {
        (void)model::attentionMap(net, *appended, mapLayer, mapHead, model::AttentionOf::Self,
                                  workers);
    });
    // Multiply-adds of the projections and MLPs (x2 for FLOPs), the attention's QK^T and PV.
    const double d = static_cast<double>(c.hidden);
    const double qDim = static_cast<double>(c.heads * c.headDim);
    const double kvDim = static_cast<double>(c.kvHeads * c.headDim);
    const double inner = static_cast<double>(c.intermediate);
    const double mlpMatrices = c.arch().mlp == model::MlpKind::Plain ? 2 : 3;
    const double perLayer = 2 * d * qDim + 2 * d * kvDim + mlpMatrices * d * inner;
    const double s = static_cast<double>(count);
    const double attentionFlops = static_cast<double>(c.layers) * 2 * s * (s + 1) * qDim;
    const double headFlops = options.logits ? 2 * s * d * static_cast<double>(c.vocab) : 0.0;
    const double flops =
        static_cast<double>(c.layers) * 2 * s * perLayer + attentionFlops + headFlops;
    const double peakRss = peakResidentBytes();
    const double size = static_cast<double>(net.checkpointBytes());
    std::printf("attnlab bench --model %s: %s, %lld layers x %lld heads (%lld kv), head dim %lld, "
                "vocab %lld; %lld tokens, %d thread%s\n",
                options.model.c_str(), std::string(c.arch().displayName).c_str(),
                static_cast<long long>(c.layers), static_cast<long long>(c.heads),
                static_cast<long long>(c.kvHeads), static_cast<long long>(c.headDim),
                static_cast<long long>(c.vocab), static_cast<long long>(count), workers,
                workers > 1 ? "s" : "");
    printKernelTarget();
    const FmaRate fmaRate = printFmaPeaks(workers, std::max(1, options.repeats / 2));
    std::printf("load (mapped, pages read)                    %9.1f ms\n", loadSeconds * 1e3);
    std::printf(
        "%-46s%9.1f ms  %6.1f GFLOP/s  %3.0f%% of peak\n",
        options.logits ? "forward, all layers, every position's logits" : "forward, all layers",
        forward * 1e3, flops / forward * 1e-9, 100.0 * flops / forward * 1e-9 / fmaRate.wall);
    if (forwardCpu > 0 && fmaRate.perCpuSecond > 0)
        std::printf("  per CPU second: %.1f GFLOP/s, %.0f%% of the FMA loop's %.1f\n",
                    flops / forwardCpu * 1e-9,
                    100.0 * flops / forwardCpu * 1e-9 / fmaRate.perCpuSecond, fmaRate.perCpuSecond);
    std::printf("  of which attention (QK^T, softmax, PV)      %9.1f ms  %6.1f GFLOP/s  %3.0f%% "
                "of peak\n",
                attention * 1e3, attentionFlops / attention * 1e-9,
                100.0 * attentionFlops / attention * 1e-9 / fmaRate.wall);
    std::printf("append one token (KV cache)                   %9.1f ms\n", append * 1e3);
    char mapLabel[64];
    std::snprintf(mapLabel, sizeof mapLabel, "one head's map (layer %lld, head %lld)",
                  static_cast<long long>(mapLayer), static_cast<long long>(mapHead));
    std::printf("%-46s%9.1f ms\n", mapLabel, map * 1e3);
    std::printf("peak RSS %.0f MB = %.2f x the checkpoint's %.0f MB\n", peakRss / 1e6,
                size > 0 ? peakRss / size : 0.0, size / 1e6);
    return 0;
}

struct Row {
    std::string name;
    double seconds;
    double flops;
};

/// What the kernel table holds at once at its largest size, in bytes: Q, K, V and the output
/// (float32, every head) and the Eigen reference's S x S product on each thread.
double tableBytes(const BenchOptions& options, int workers) {
    const double s =
        static_cast<double>(*std::max_element(options.sizes.begin(), options.sizes.end()));
    const double h = static_cast<double>(options.heads);
    const double d = static_cast<double>(options.dim);
    return 4.0 * (4.0 * h * s * d + static_cast<double>(workers) * s * s);
}

/// Refuses sizes beyond the machine's memory, then asks for the largest size's memory at once
/// (without touching it), so that a run that cannot have it stops before printing a line of the
/// table: operator new throws std::bad_alloc, which runCommandBody reports.
void checkMemory(const BenchOptions& options, int workers) {
    const double bytes = tableBytes(options, workers);
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long pageSize = sysconf(_SC_PAGESIZE);
    const double machine = pages > 0 && pageSize > 0
                               ? static_cast<double>(pages) * static_cast<double>(pageSize)
                               : 0.0;
    if (machine > 0 && bytes > machine) {
        char text[96];
        std::snprintf(
            text, sizeof text, "needs %.3g GB at S = %lld, this machine has %.3g GB", bytes / 1e9,
            static_cast<long long>(*std::max_element(options.sizes.begin(), options.sizes.end())),
            machine / 1e9);
        fail("--sizes, --heads, --dim and --threads: the table " + std::string(text));
    }
    void* probe = ::operator new(static_cast<std::size_t>(bytes));
    ::operator delete(probe);
}

int benchBody(int argc, char** argv) {
    const BenchOptions options = parseOptions(argc, argv);
    if (options.help) {
        printHelp();
        return 0;
    }
    const int workers = resolveThreads(options.threads);
    if (!options.model.empty()) return benchModel(options, workers);
    checkMemory(options, workers);
    const Index d = options.dim;
    const Index h = options.heads;

    std::printf("attnlab bench: D = %lld, H = %lld, batch 1, threads %d, q/kv tile %lldx%lld, "
                "median of %d\n",
                static_cast<long long>(d), static_cast<long long>(h), workers,
                static_cast<long long>(options.qBlock), static_cast<long long>(options.kvBlock),
                options.repeats);
    printKernelTarget();
    const double peak = printFmaPeaks(workers, std::max(1, options.repeats / 2)).wall;
    std::printf("\n");
    std::printf("%7s  %-14s %11s %10s %9s %9s\n", "S", "kernel", "median ms", "GFLOP/s", "vs GEMM",
                "vs peak");

    for (Index s : options.sizes) {
        Qkv qkv{randomTensor(h, s, d, 1), randomTensor(h, s, d, 2), randomTensor(h, s, d, 3)};
        const double full = 4.0 * static_cast<double>(s) * static_cast<double>(s) *
                            static_cast<double>(d) * static_cast<double>(h);
        const double causalHalf = 4.0 * static_cast<double>(s) * static_cast<double>(s + 1) / 2 *
                                  static_cast<double>(d) * static_cast<double>(h);
        std::vector<Row> rows;

        // The reference: per head C = Q K^T ([S,D] x [D,S]) then C V ([S,S] x [S,D]) with
        // Eigen, the heads spread over the same threads.
        {
            Tensor4 out(1, h, s, d);
            std::vector<Matrix> scratch(static_cast<std::size_t>(workers));
            const double seconds = medianSeconds(options.repeats, [&] {
                onWorkers(workers, [&](int w) {
                    Matrix& c = scratch[static_cast<std::size_t>(w)];
                    c.resize(s, s);
                    for (Index head = w; head < h; head += workers) {
                        c.noalias() = qkv.q.head(0, head) * qkv.k.head(0, head).transpose();
                        out.head(0, head).noalias() = c * qkv.v.head(0, head);
                    }
                });
            });
            rows.push_back({"eigen-gemm", seconds, full});
        }

        auto timeVariant = [&](const char* name, Variant variant, bool causal, double flops) {
            AttentionSpec spec;
            spec.variant = variant;
            spec.mask.causal = causal;
            spec.wantWeights = false;
            spec.threads = workers;
            spec.qBlock = options.qBlock;
            spec.kvBlock = options.kvBlock;
            const double seconds = medianSeconds(options.repeats, [&] { (void)attend(qkv, spec); });
            rows.push_back({name, seconds, flops});
        };
        timeVariant("softmax", Variant::Softmax, false, full);
        timeVariant("flash", Variant::Flash, false, full);
        timeVariant("flash-causal", Variant::Flash, true, causalHalf);
        timeVariant("softmax-causal", Variant::Softmax, true, causalHalf);
        timeVariant("linear", Variant::Linear, false,
                    4.0 * static_cast<double>(s) * static_cast<double>(d) * static_cast<double>(d) *
                        static_cast<double>(h));

        const double gemmRate = rows.front().flops / rows.front().seconds * 1e-9;
        for (const Row& row : rows) {
            const double rate = row.flops / row.seconds * 1e-9;
            std::printf("%7lld  %-14s %11.2f %10.1f %8.0f%% %8.0f%%\n", static_cast<long long>(s),
                        row.name.c_str(), row.seconds * 1e3, rate, 100.0 * rate / gemmRate,
                        100.0 * rate / peak);
        }
        std::printf("\n");
    }
    std::printf("causal rows count the S(S+1)/2 pairs they need; linear counts 4 S D^2 H, so\n"
                "its percentages compare rates, not times.\n");
    return 0;
}

} // namespace

int benchCommand(int argc, char** argv) {
    return runCommandBody("bench", benchBody, argc, argv,
                          "not enough memory for these sizes (Q, K, V and the output: 4 x heads x "
                          "S x dim floats; the Eigen reference: S x S floats per thread)");
}

} // namespace attnlab::app
