#pragma once
/// Models downloaded from the Hugging Face Hub (or a mirror) into the cache huggingface_hub
/// reads, laid out as its hf_hub_download leaves them (hub_cache.h has the layout), so a model
/// AttnLab fetched opens in transformers and the other way round. libcurl does the HTTP (TLS
/// verified, redirects followed, the proxy variables honoured); OpenSSL checks the bytes.
///
/// What is fetched is what AttnLab reads and nothing else: config.json,
/// generation_config.json, the tokenizer files, an image classifier's preprocessor_config.json,
/// and the weights — the safetensors and their
/// index, or pytorch_model.bin (and its index) only when the repository has no safetensors.
///
/// For each file, as huggingface_hub does it:
///   1. HEAD ENDPOINT/REPO/resolve/COMMIT/FILE (relative redirects followed, an absolute one —
///      the CDN — kept as the download address): the blob's etag, size and commit;
///   2. a blob already in blobs/ is linked, not fetched again;
///   3. otherwise GET into blobs/ETAG.incomplete, resuming with a Range from what is there;
///   4. the bytes checked: an LFS etag is the file's sha256, a git etag the git blob's sha1;
///      a file whose hash or size is wrong is removed and nothing enters blobs/;
///   5. renamed to blobs/ETAG, linked from snapshots/COMMIT/FILE, and refs/REVISION written.
/// A cancelled or failed download keeps its .incomplete file: the next try resumes there.
///
///   HubDownloadOptions options;                 // endpoint, cache and token from the environment
///   options.progress = [](const HubDownloadProgress& p) { ...; return !cancelled; };
///   auto plan = planHubDownload(*parseHubId("openai-community/gpt2"), options);
///   auto folder = downloadHubModel(*plan, options);   // the snapshot folder

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attnlab/base/result.h"
#include "attnlab/model/hub_cache.h"

namespace attnlab::model {

/// $HF_ENDPOINT without its trailing '/', else "https://huggingface.co".
std::string hubEndpoint();

/// Where a download is, for a progress bar: the file being fetched and the whole.
struct HubDownloadProgress {
    std::string file;          ///< the file now being fetched ("" while planning)
    std::size_t fileIndex = 0; ///< 0-based, among the files to fetch
    std::size_t fileCount = 0;
    std::uint64_t fileDone = 0;  ///< bytes of this file on disk
    std::uint64_t fileBytes = 0; ///< its size (0 when the server does not say)
    std::uint64_t done = 0;      ///< bytes of every file to fetch on disk
    std::uint64_t total = 0;     ///< their size
};

struct HubDownloadOptions {
    std::string endpoint;  ///< "" means hubEndpoint()
    std::string cacheRoot; ///< "" means hubCacheRoot()
    std::string token;     ///< "" means hubToken()
    /// Called as bytes arrive (at most every few hundred kilobytes) and between files; return
    /// false to cancel: the download stops, keeps what it wrote, and returns an error.
    std::function<bool(const HubDownloadProgress&)> progress;
    /// One line per file when it is done or found already in the cache (for a log).
    std::function<void(const std::string&)> fileDone;
};

/// Speed and time left, from the progress over the last few seconds.
class DownloadRate {
public:
    /// `done` bytes at `seconds` since the download began.
    void add(double seconds, std::uint64_t done);
    /// 0 until two samples a tenth of a second apart.
    double bytesPerSecond() const;
    /// Seconds to fetch the rest of `total` at that speed; a negative number when unknown.
    double secondsLeft(std::uint64_t total) const;

private:
    std::vector<std::pair<double, std::uint64_t>> m_samples; // the last 5 s
};

/// "1:05" for 65 s, "1:02:03" for an hour and more.
std::string durationText(double seconds);

/// One line for a terminal: "model.safetensors (2/3)  45.2 MB of 548.1 MB  12.3 MB/s  0:41 left".
std::string downloadStatusLine(const HubDownloadProgress& progress, const DownloadRate& rate);

/// One file to fetch, as the Hub describes it.
struct HubDownloadFile {
    std::string name; ///< its path in the repository
    std::string etag; ///< the blob's name in blobs/ (sha256 for LFS, git sha1 otherwise)
    std::uint64_t bytes = 0;
    std::string url;     ///< where its bytes come from (the CDN's address for LFS files)
    bool cached = false; ///< its blob is already in the cache
};

/// What a download of one revision fetches.
struct HubDownloadPlan {
    HubId id;
    std::string endpoint;
    std::string cacheRoot;
    std::string commit;
    std::vector<HubDownloadFile> files;
    std::uint64_t bytes = 0;   ///< every file's size
    std::uint64_t missing = 0; ///< the size of those not yet in the cache
};

/// The files of `id` that AttnLab reads, with their sizes and etags: the Hub's model API
/// (ENDPOINT/api/models/REPO/revision/REVISION) and one HEAD per file. Errors say what the
/// server said: not found, private or gated (and how to get access: HF_TOKEN), no network;
/// refused when HF_HUB_OFFLINE is set. Nothing is written.
Result<HubDownloadPlan> planHubDownload(const HubId& id, const HubDownloadOptions& options = {});

/// Fetches what `plan` lists into its cache and returns the snapshot folder. Files already
/// there are linked, not fetched. Cancelled (progress returned false) or failed, it returns
/// the error; every byte written stays in blobs/ETAG.incomplete for the next try.
Result<std::string> downloadHubModel(const HubDownloadPlan& plan,
                                     const HubDownloadOptions& options = {});

/// What the model API returned, read: the commit and the repository's file names. The JSON is
/// the server's and untrusted: anything but an object with a 40-hex "sha" and "siblings" of
/// {"rfilename": string} is an error naming what is wrong.
struct HubModelInfo {
    std::string commit;
    std::vector<std::string> files;
};
Result<HubModelInfo> parseHubModelInfo(std::string_view json);

/// Of a repository's files, those AttnLab reads (see above), in the repository's order.
std::vector<std::string> filesAttnLabReads(const std::vector<std::string>& files);

/// `argument` as --model opens it: a folder; a Hub id already in the cache; or, unless
/// HF_HUB_OFFLINE is set, a Hub id downloaded first (with `options`' progress; `planned`, when
/// given, hears what will be fetched before the first byte). Anything else is returned as it
/// is, and the loader says the folder does not exist.
Result<std::string>
fetchModelArgument(const std::string& argument, const HubDownloadOptions& options = {},
                   const std::function<void(const HubDownloadPlan&)>& planned = {});

} // namespace attnlab::model
