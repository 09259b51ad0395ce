// Downloads from the Hugging Face Hub into huggingface_hub's cache layout, as its
// file_download.py does (hf_hub_download, get_hf_file_metadata, _download_to_tmp_and_move):
// libcurl for HTTP, OpenSSL for the hashes, flock for the lock huggingface_hub's filelock takes.

#include "attnlab/model/hub_download.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "attnlab/io/file_io.h"
#include "attnlab/io/json_read.h"
#include "hub_strings.h"

namespace attnlab::model {
namespace {

using hub::environment;
using hub::trimmed;

namespace fs = std::filesystem;

constexpr const char* kDefaultEndpoint = "https://huggingface.co";
/// The model API's answer for the largest repositories is a few hundred kilobytes.
constexpr std::size_t kMaxApiBytes = 32u << 20;
/// An error page is read this far, for its message.
constexpr std::size_t kMaxErrorBytes = 4096;
constexpr auto kProgressInterval = std::chrono::milliseconds(50);

std::string lowercase(std::string text) {
    for (char& c : text)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

bool isHex(std::string_view text, std::size_t size) {
    return text.size() == size && std::all_of(text.begin(), text.end(), [](char c) {
               return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
           });
}

/// A blob's name comes from a server's header and becomes a file name: letters, digits, '-'
/// and '_' only, as every etag the Hub gives (sha256, git sha1, xet hashes).
bool isSafeEtag(std::string_view etag) {
    return !etag.empty() && etag.size() <= 128 && std::all_of(etag.begin(), etag.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
    });
}

/// Percent-encodes everything but RFC 3986's unreserved characters (and '/' when asked), as
/// huggingface_hub's quote().
std::string quoted(std::string_view text, bool keepSlash) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~' ||
            (keepSlash && c == '/'))
            out += c;
        else {
            out += '%';
            out += kHex[u >> 4];
            out += kHex[u & 15];
        }
    }
    return out;
}

/// scheme://host[:port] of an address.
std::string originOf(const std::string& url) {
    const auto scheme = url.find("://");
    if (scheme == std::string::npos) return url;
    const auto path = url.find('/', scheme + 3);
    return path == std::string::npos ? url : url.substr(0, path);
}

// ---- HTTP through libcurl ---------------------------------------------------------------

void initialiseCurl() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Response {
    long status = 0;
    std::map<std::string, std::string> headers; ///< the last response's, names lowercased
    std::string body;                           ///< when no sink took it
    CURLcode code = CURLE_OK;
    std::string curlError;
    bool cancelled = false;
    std::string sinkError;
};

struct Request {
    std::string url;
    bool head = false;
    bool follow = true;
    std::vector<std::string> headers;
    std::size_t maxBody = kMaxApiBytes;
    /// Takes the body of a 2xx answer; false stops the transfer (sinkError says why).
    std::function<bool(const char*, std::size_t, Response&)> sink;
    /// Bytes of the body so far; false cancels.
    std::function<bool(std::uint64_t)> progress;
};

struct Transfer {
    CURL* handle;
    const Request* request;
    Response* response;
};

std::size_t onHeader(char* data, std::size_t size, std::size_t count, void* user) {
    auto* transfer = static_cast<Transfer*>(user);
    const std::string line(data, size * count);
    if (line.rfind("HTTP/", 0) == 0) {
        transfer->response->headers.clear(); // a new response: a redirect's, or the last
        return size * count;
    }
    if (const auto colon = line.find(':'); colon != std::string::npos)
        transfer->response->headers[lowercase(line.substr(0, colon))] =
            trimmed(line.substr(colon + 1));
    return size * count;
}

std::size_t onBody(char* data, std::size_t size, std::size_t count, void* user) {
    auto* transfer = static_cast<Transfer*>(user);
    Response& response = *transfer->response;
    const std::size_t bytes = size * count;
    long status = 0;
    curl_easy_getinfo(transfer->handle, CURLINFO_RESPONSE_CODE, &status);
    if (status >= 300 && status < 400) return bytes; // a redirect's own page
    if (transfer->request->sink && status >= 200 && status < 300)
        return transfer->request->sink(data, bytes, response) ? bytes : 0;
    const std::size_t cap =
        status >= 200 && status < 300 ? transfer->request->maxBody : kMaxErrorBytes;
    if (response.body.size() + bytes > cap) {
        if (status < 200 || status >= 300) return bytes; // enough of an error page
        response.sinkError = "the answer is larger than " + sizeText(cap);
        return 0;
    }
    response.body.append(data, bytes);
    return bytes;
}

int onProgress(void* user, curl_off_t, curl_off_t now, curl_off_t, curl_off_t) {
    auto* transfer = static_cast<Transfer*>(user);
    if (!transfer->request->progress) return 0;
    if (transfer->request->progress(static_cast<std::uint64_t>(now))) return 0;
    transfer->response->cancelled = true;
    return 1;
}

Response perform(const Request& request) {
    initialiseCurl();
    Response response;
    std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> handle(curl_easy_init(), curl_easy_cleanup);
    if (!handle) {
        response.code = CURLE_FAILED_INIT;
        response.curlError = "libcurl could not start";
        return response;
    }
    CURL* curl = handle.get();
    Transfer transfer{curl, &request, &response};
    char error[CURL_ERROR_SIZE] = {};
    curl_slist* headers = nullptr;
    for (const auto& header : request.headers)
        headers = curl_slist_append(headers, header.c_str());
    curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "attnlab (libcurl)");
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, request.follow ? 1L : 0L);
    curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 30L);
    // A stalled connection (under 1 byte/s for a minute) is an error, not a hang.
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 60L);
    if (request.head) curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, onHeader);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, onBody);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, onProgress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &transfer);
    response.code = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
    curl_slist_free_all(headers);
    if (response.code != CURLE_OK)
        response.curlError = error[0] ? error : curl_easy_strerror(response.code);
    return response;
}

std::string header(const Response& response, const std::string& name) {
    const auto it = response.headers.find(name);
    return it == response.headers.end() ? std::string() : it->second;
}

/// An etag as huggingface_hub normalises it: no weak marker, no quotes.
std::string normalisedEtag(std::string etag) {
    if (etag.rfind("W/", 0) == 0) etag = etag.substr(2);
    etag.erase(std::remove(etag.begin(), etag.end(), '"'), etag.end());
    return etag;
}

std::vector<std::string> authorisation(const std::string& token) {
    if (token.empty()) return {};
    return {"Authorization: Bearer " + token};
}

/// The error for a transfer that failed or an HTTP status that is not success.
std::string failure(const Response& response, const std::string& what, const HubId& id,
                    const std::string& endpoint, bool hadToken) {
    if (response.cancelled) return "cancelled";
    if (!response.sinkError.empty()) return what + ": " + response.sinkError;
    if (response.code != CURLE_OK && response.status == 0)
        return "cannot reach " + endpoint + " (" + response.curlError +
               "); HF_ENDPOINT names a mirror, HF_HUB_OFFLINE=1 reads the cache only";
    std::string said = header(response, "x-error-message");
    if (said.empty() && response.body.size() < 512 &&
        std::all_of(response.body.begin(), response.body.end(),
                    [](unsigned char c) { return c >= 0x20 || c == '\n'; }))
        said = trimmed(response.body);
    const std::string server = said.empty() ? "" : " (the server says: " + said + ")";
    switch (response.status) {
    case 401:
        return hadToken ? id.repo +
                              " refused the token given (HF_TOKEN or the token file): it "
                              "may be private or gated, or the token expired" +
                              server
                        : id.repo +
                              " needs a token: it is private or gated, or does not exist. "
                              "Set HF_TOKEN (or run huggingface-cli login) with a token that "
                              "can read it" +
                              server;
    case 403:
        return id.repo + " is gated and this token has no access yet: ask for it at " + endpoint +
               "/" + id.repo + ", then try again" + server;
    case 404:
        return what + " is not on " + endpoint + " (check the id and the revision '" + id.revision +
               "')" + server;
    default:
        if (response.code != CURLE_OK) return what + ": " + response.curlError;
        return what + ": " + endpoint + " answered HTTP " + std::to_string(response.status) +
               server;
    }
}

// ---- files and hashes -------------------------------------------------------------------

bool isWeights(const std::string& name, const std::string& prefix, const std::string& suffix) {
    return name.rfind(prefix, 0) == 0 && name.size() > suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// The file's sha256 (an LFS etag) or its git blob sha1 (a git etag); "" when it cannot be read.
std::string digest(const fs::path& path, bool gitBlob) {
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (!file) return {};
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(),
                                                                    EVP_MD_CTX_free);
    bool ok = context &&
              EVP_DigestInit_ex(context.get(), gitBlob ? EVP_sha1() : EVP_sha256(), nullptr) == 1;
    if (ok && gitBlob) {
        std::error_code ec;
        const std::string prefix = "blob " + std::to_string(fs::file_size(path, ec)) + '\0';
        ok = !ec && EVP_DigestUpdate(context.get(), prefix.data(), prefix.size()) == 1;
    }
    std::vector<char> buffer(1 << 20);
    while (ok) {
        const std::size_t got = std::fread(buffer.data(), 1, buffer.size(), file);
        if (got > 0) ok = EVP_DigestUpdate(context.get(), buffer.data(), got) == 1;
        if (got < buffer.size()) {
            ok = ok && !std::ferror(file);
            break;
        }
    }
    std::fclose(file);
    unsigned char value[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    if (!ok || EVP_DigestFinal_ex(context.get(), value, &size) != 1) return {};
    std::string hex;
    static constexpr char kHex[] = "0123456789abcdef";
    for (unsigned int i = 0; i < size; ++i) {
        hex += kHex[value[i] >> 4];
        hex += kHex[value[i] & 15];
    }
    return hex;
}

/// huggingface_hub's lock for one blob (CACHE/.locks/models--ORG--NAME/ETAG.lock), taken with
/// flock as its filelock takes it, so a download here and one in Python never write one blob
/// at once. While another process holds it, `wait` is asked every 200 ms whether to go on.
class BlobLock {
public:
    BlobLock(const fs::path& path, const std::function<bool()>& wait) {
        std::error_code ec;
        fs::create_directories(path.parent_path(), ec);
        m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (m_fd < 0) return; // a read-only lock folder: go on unlocked, as filelock would fail
        while (::flock(m_fd, LOCK_EX | LOCK_NB) != 0) {
            if (!wait()) {
                m_cancelled = true;
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
    }
    ~BlobLock() {
        if (m_fd >= 0) ::close(m_fd); // closing releases the flock
    }
    BlobLock(const BlobLock&) = delete;
    BlobLock& operator=(const BlobLock&) = delete;
    bool cancelled() const { return m_cancelled; }

private:
    int m_fd = -1;
    bool m_cancelled = false;
};

/// snapshots/COMMIT/FILE -> the blob, relative as huggingface_hub links it.
Status linkPointer(const fs::path& blob, const fs::path& pointer) {
    std::error_code ec;
    fs::create_directories(pointer.parent_path(), ec);
    fs::remove(pointer, ec);
    fs::create_symlink(fs::relative(blob, pointer.parent_path(), ec), pointer, ec);
    if (ec) return Error{"cannot link " + pointer.string() + " to its blob: " + ec.message()};
    return std::nullopt;
}

std::string offlineRefusal(const HubId& id) {
    return "HF_HUB_OFFLINE is set: AttnLab reads the cache only and does not download " + id.repo;
}

std::string resolveUrl(const std::string& endpoint, const HubId& id, const std::string& commit,
                       const std::string& file) {
    return endpoint + "/" + id.repo + "/resolve/" + commit + "/" + quoted(file, true);
}

/// hf_hub_download's metadata step: HEAD, following relative redirects (a renamed
/// repository) and keeping an absolute one (the CDN) as where the bytes are.
Result<HubDownloadFile> fileMetadata(const HubDownloadPlan& plan, const std::string& name,
                                     const std::string& token) {
    HubDownloadFile file;
    file.name = name;
    std::string url = resolveUrl(plan.endpoint, plan.id, plan.commit, name);
    const std::string what = plan.id.repo + "/" + name;
    for (int redirects = 0;; ++redirects) {
        Request request;
        request.url = url;
        request.head = true;
        request.follow = false;
        request.headers = authorisation(token);
        request.headers.push_back("Accept-Encoding: identity");
        const Response response = perform(request);
        if (response.code != CURLE_OK || response.status >= 400 || response.status < 200)
            return Error{failure(response, what, plan.id, plan.endpoint, !token.empty())};
        const std::string location = header(response, "location");
        const bool redirected = response.status >= 300 && response.status < 400;
        if (redirected && location.empty())
            return Error{what + ": HTTP " + std::to_string(response.status) +
                         " without a Location"};
        if (redirected && location.front() == '/' && header(response, "x-linked-etag").empty()) {
            if (redirects >= 5) return Error{what + ": too many redirects"};
            url = originOf(plan.endpoint) + location;
            continue;
        }
        const std::string commit = header(response, "x-repo-commit");
        if (!commit.empty() && commit != plan.commit)
            return Error{what + ": the server gave commit " + commit.substr(0, 40) +
                         " for a file of commit " + plan.commit};
        std::string etag = header(response, "x-linked-etag");
        if (etag.empty()) etag = header(response, "etag");
        etag = normalisedEtag(etag);
        if (!isSafeEtag(etag))
            return Error{what + ": the server gave no usable ETag ('" + etag.substr(0, 80) + "')"};
        file.etag = etag;
        std::string size = header(response, "x-linked-size");
        if (size.empty()) size = header(response, "content-length");
        if (!size.empty()) {
            char* end = nullptr;
            const unsigned long long bytes = std::strtoull(size.c_str(), &end, 10);
            if (!end || *end != '\0' || !std::isdigit(static_cast<unsigned char>(size[0])))
                return Error{what + ": the server gave the size '" + size.substr(0, 40) + "'"};
            file.bytes = bytes;
        }
        file.url =
            redirected ? (location.front() == '/' ? originOf(url) + location : location) : url;
        return file;
    }
}

} // namespace

void DownloadRate::add(double seconds, std::uint64_t done) {
    m_samples.emplace_back(seconds, done);
    while (m_samples.size() > 2 && seconds - m_samples[1].first >= 5.0)
        m_samples.erase(m_samples.begin());
}

double DownloadRate::bytesPerSecond() const {
    if (m_samples.size() < 2) return 0;
    const auto& [t0, b0] = m_samples.front();
    const auto& [t1, b1] = m_samples.back();
    if (t1 - t0 < 0.1 || b1 < b0) return 0;
    return double(b1 - b0) / (t1 - t0);
}

double DownloadRate::secondsLeft(std::uint64_t total) const {
    const double speed = bytesPerSecond();
    if (speed <= 0 || m_samples.empty()) return -1;
    const std::uint64_t done = m_samples.back().second;
    return done >= total ? 0 : double(total - done) / speed;
}

std::string durationText(double seconds) {
    const auto whole = static_cast<long long>(std::max(0.0, seconds) + 0.5);
    char text[32];
    if (whole >= 3600)
        std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", whole / 3600, whole / 60 % 60,
                      whole % 60);
    else
        std::snprintf(text, sizeof text, "%lld:%02lld", whole / 60, whole % 60);
    return text;
}

std::string downloadStatusLine(const HubDownloadProgress& progress, const DownloadRate& rate) {
    std::string line = progress.file + " (" + std::to_string(progress.fileIndex + 1) + "/" +
                       std::to_string(progress.fileCount) + ")  " + sizeText(progress.done) +
                       " of " + sizeText(progress.total);
    if (const double speed = rate.bytesPerSecond(); speed > 0)
        line += "  " + sizeText(static_cast<std::uint64_t>(speed)) + "/s";
    if (const double left = rate.secondsLeft(progress.total); left >= 0)
        line += "  " + durationText(left) + " left";
    return line;
}

std::string hubEndpoint() {
    std::string endpoint = environment("HF_ENDPOINT");
    if (endpoint.empty()) endpoint = kDefaultEndpoint;
    while (!endpoint.empty() && endpoint.back() == '/')
        endpoint.pop_back();
    return endpoint;
}

Result<HubModelInfo> parseHubModelInfo(std::string_view json) {
    auto parsed = detail::parseJson(std::string(json));
    if (!parsed || !parsed->is_object())
        return Error{"the model API's answer is not a JSON object"};
    HubModelInfo info;
    const auto sha = parsed->find("sha");
    if (sha == parsed->end() || !sha->is_string() || !isHex(sha->get<std::string>(), 40))
        return Error{"the model API's answer has no 40-digit commit in \"sha\""};
    info.commit = sha->get<std::string>();
    const auto siblings = parsed->find("siblings");
    if (siblings == parsed->end() || !siblings->is_array())
        return Error{"the model API's answer has no \"siblings\" list"};
    for (std::size_t i = 0; i < siblings->size(); ++i) {
        const auto& sibling = (*siblings)[i];
        const auto name = sibling.is_object() ? sibling.find("rfilename") : sibling.end();
        if (!sibling.is_object() || name == sibling.end() || !name->is_string())
            return Error{"the model API's answer: siblings[" + std::to_string(i) +
                         "] has no \"rfilename\" string"};
        info.files.push_back(name->get<std::string>());
    }
    return info;
}

std::vector<std::string> filesAttnLabReads(const std::vector<std::string>& files) {
    static const std::vector<std::string> kNamed = {
        "config.json",
        "generation_config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "vocab.json",
        "target_vocab.json",
        "model.safetensors.index.json",
        "preprocessor_config.json", // an image classifier's image processor
    };
    const bool hasSafetensors = std::any_of(files.begin(), files.end(), [](const auto& name) {
        return isWeights(name, "model", ".safetensors");
    });
    std::vector<std::string> chosen;
    for (const auto& name : files) {
        // Only the repository's top folder: the loader reads nothing below it.
        if (name.empty() || name.find('/') != std::string::npos ||
            name.find('\\') != std::string::npos || name == "." || name == "..")
            continue;
        const bool wanted = std::find(kNamed.begin(), kNamed.end(), name) != kNamed.end() ||
                            isWeights(name, "", ".spm") || isWeights(name, "", ".model") ||
                            isWeights(name, "model", ".safetensors") ||
                            (!hasSafetensors && (isWeights(name, "pytorch_model", ".bin") ||
                                                 name == "pytorch_model.bin.index.json"));
        if (wanted) chosen.push_back(name);
    }
    return chosen;
}

Result<HubDownloadPlan> planHubDownload(const HubId& id, const HubDownloadOptions& options) {
    HubDownloadPlan plan;
    plan.id = id;
    plan.endpoint = options.endpoint.empty() ? hubEndpoint() : options.endpoint;
    plan.cacheRoot = options.cacheRoot.empty() ? hubCacheRoot() : options.cacheRoot;
    if (hubOffline()) return Error{offlineRefusal(id)};
    const std::string token = options.token.empty() ? hubToken() : options.token;
    const auto keepGoing = [&] {
        return !options.progress || options.progress(HubDownloadProgress{});
    };

    Request request;
    request.url =
        plan.endpoint + "/api/models/" + id.repo + "/revision/" + quoted(id.revision, false);
    request.headers = authorisation(token);
    request.progress = [&](std::uint64_t) { return keepGoing(); };
    const Response response = perform(request);
    if (response.code != CURLE_OK || response.status != 200)
        return Error{
            failure(response, id.repo + "@" + id.revision, id, plan.endpoint, !token.empty())};
    auto info = parseHubModelInfo(response.body);
    if (!info) return Error{plan.endpoint + ": " + id.repo + ": " + info.error()};
    plan.commit = info->commit;

    const auto names = filesAttnLabReads(info->files);
    if (std::find(names.begin(), names.end(), "config.json") == names.end())
        return Error{id.repo + "@" + id.revision +
                     " has no config.json: it is not a model "
                     "transformers (or AttnLab) opens"};
    const fs::path blobs = fs::path(hubRepoFolder(plan.cacheRoot, id.repo)) / "blobs";
    for (const auto& name : names) {
        if (!keepGoing()) return Error{"cancelled"};
        auto file = fileMetadata(plan, name, token);
        if (!file) return Error{file.error()};
        std::error_code ec;
        file->cached = fs::is_regular_file(blobs / file->etag, ec);
        plan.bytes += file->bytes;
        if (!file->cached) plan.missing += file->bytes;
        plan.files.push_back(std::move(*file));
    }
    return plan;
}

Result<std::string> downloadHubModel(const HubDownloadPlan& plan,
                                     const HubDownloadOptions& options) {
    if (hubOffline()) return Error{offlineRefusal(plan.id)};
    const std::string token = options.token.empty() ? hubToken() : options.token;
    const fs::path repo = hubRepoFolder(plan.cacheRoot, plan.id.repo);
    const fs::path blobs = repo / "blobs";
    const fs::path snapshot = repo / "snapshots" / plan.commit;
    const fs::path locks =
        fs::path(plan.cacheRoot) / ".locks" / fs::path(hubRepoFolder("", plan.id.repo)).filename();
    std::error_code ec;
    fs::create_directories(blobs, ec);
    if (ec) return Error{"cannot create " + blobs.string() + ": " + ec.message()};

    // Enough room for what is missing (less what earlier tries left in .incomplete files).
    std::uint64_t needed = 0;
    for (const auto& file : plan.files) {
        if (file.cached) continue;
        const auto partial = fs::file_size(blobs / (file.etag + ".incomplete"), ec);
        needed += file.bytes - std::min<std::uint64_t>(file.bytes, ec ? 0 : partial);
    }
    if (const auto space = fs::space(blobs, ec); !ec && space.available < needed)
        return Error{"downloading " + plan.id.repo + " needs " + sizeText(needed) + ", and " +
                     blobs.string() + " has " + sizeText(space.available) + " free"};

    HubDownloadProgress progress;
    progress.fileCount = plan.files.size();
    progress.total = plan.bytes;
    auto lastReport = std::chrono::steady_clock::now() - kProgressInterval;
    const auto report = [&](bool always) {
        if (!options.progress) return true;
        const auto now = std::chrono::steady_clock::now();
        if (!always && now - lastReport < kProgressInterval) return true;
        lastReport = now;
        return options.progress(progress);
    };

    std::uint64_t before = 0; // the bytes of the files done
    for (std::size_t index = 0; index < plan.files.size(); ++index) {
        const HubDownloadFile& file = plan.files[index];
        progress.file = file.name;
        progress.fileIndex = index;
        progress.fileBytes = file.bytes;
        progress.fileDone = 0;
        progress.done = before;
        if (!report(true)) return Error{"cancelled"};
        const fs::path blob = blobs / file.etag;
        const fs::path pointer = snapshot / file.name;
        const std::string what = plan.id.repo + "/" + file.name;

        BlobLock lock(locks / (file.etag + ".lock"), [&] { return report(true); });
        if (lock.cancelled()) return Error{"cancelled"};
        bool fetched = false;
        if (!fs::is_regular_file(blob, ec)) {
            const fs::path incomplete = blob.string() + ".incomplete";
            std::uint64_t offset =
                fs::is_regular_file(incomplete, ec) ? fs::file_size(incomplete, ec) : 0;
            if (ec) offset = 0;
            if (file.bytes > 0 && offset > file.bytes) {
                fs::remove(incomplete, ec); // longer than the file: not its bytes
                offset = 0;
            }
            if (file.bytes == 0 || offset < file.bytes) {
                std::unique_ptr<std::FILE, decltype(&std::fclose)> out(
                    std::fopen(incomplete.c_str(), "ab"), std::fclose);
                if (!out)
                    return Error{"cannot write " + incomplete.string() + ": " +
                                 std::strerror(errno)};
                Request request;
                request.url = file.url;
                // The token goes to the Hub itself, never to another host (the CDN's address is
                // signed); libcurl drops it on a redirect to another host as well.
                if (originOf(file.url) == originOf(plan.endpoint))
                    request.headers = authorisation(token);
                request.headers.push_back("Accept-Encoding: identity");
                if (offset > 0)
                    request.headers.push_back("Range: bytes=" + std::to_string(offset) + "-");
                bool first = true;
                std::uint64_t written = offset;
                request.sink = [&](const char* data, std::size_t size, Response& response) {
                    if (first) {
                        first = false;
                        if (response.status == 200 && offset > 0) {
                            // The server sent the whole file: start it again.
                            out.reset(std::fopen(incomplete.c_str(), "wb"));
                            written = 0;
                            offset = 0;
                            if (!out) {
                                response.sinkError = "cannot write " + incomplete.string();
                                return false;
                            }
                        } else if (response.status == 206) {
                            const std::string range = header(response, "content-range");
                            const std::string expected = "bytes " + std::to_string(offset) + "-";
                            if (range.rfind(expected, 0) != 0) {
                                response.sinkError =
                                    "asked for bytes from " + std::to_string(offset) +
                                    ", the server sent '" + range.substr(0, 60) + "'";
                                return false;
                            }
                        }
                    }
                    if (std::fwrite(data, 1, size, out.get()) != size) {
                        response.sinkError =
                            "cannot write " + incomplete.string() + ": " + std::strerror(errno);
                        return false;
                    }
                    written += size;
                    return true;
                };
                request.progress = [&](std::uint64_t) {
                    progress.fileDone = written;
                    progress.done = before + written;
                    return report(false);
                };
                const Response response = perform(request);
                const bool flushed = out && std::fflush(out.get()) == 0;
                out.reset();
                if (response.code != CURLE_OK || response.status < 200 || response.status >= 300)
                    return Error{failure(response, what, plan.id, plan.endpoint, !token.empty()) +
                                 (response.cancelled
                                      ? ""
                                      : "; what arrived is kept in " + incomplete.string() +
                                            " and the next try resumes there")};
                if (!flushed) return Error{"cannot write " + incomplete.string()};
            }
            const auto got = fs::file_size(incomplete, ec);
            if (ec) return Error{"cannot read " + incomplete.string() + ": " + ec.message()};
            if (file.bytes > 0 && got != file.bytes) {
                fs::remove(incomplete, ec);
                return Error{what + ": " + std::to_string(got) + " bytes arrived, the Hub said " +
                             std::to_string(file.bytes) + "; nothing was kept"};
            }
            const bool lfs = isHex(file.etag, 64);
            if (lfs || isHex(file.etag, 40)) {
                const std::string hash = digest(incomplete, !lfs);
                if (hash != file.etag) {
                    fs::remove(incomplete, ec);
                    return Error{what + ": its " + (lfs ? "sha256" : "git sha1") + " is " +
                                 (hash.empty() ? std::string("unreadable") : hash) +
                                 ", the Hub says " + file.etag +
                                 "; the bytes were removed and nothing entered the cache"};
                }
            }
            fs::rename(incomplete, blob, ec);
            if (ec) return Error{"cannot move " + incomplete.string() + ": " + ec.message()};
            fetched = true;
        }
        if (auto linked = linkPointer(blob, pointer)) return Error{linked->message};
        before += file.bytes;
        progress.fileDone = file.bytes;
        progress.done = before;
        if (!report(true)) return Error{"cancelled"};
        if (options.fileDone)
            options.fileDone(file.name + " " + sizeText(file.bytes) +
                             (fetched ? " downloaded" : " already in the cache"));
    }
    if (plan.id.revision != plan.commit) {
        const fs::path ref = repo / "refs" / plan.id.revision; // refs/pr/1 is a nested file
        fs::create_directories(ref.parent_path(), ec);
        if (auto written = writeFileAtomic(ref.string(), plan.commit))
            return Error{written->message};
    }
    fs::create_directories(snapshot, ec);
    return snapshot.string();
}

Result<std::string> fetchModelArgument(const std::string& argument,
                                       const HubDownloadOptions& options,
                                       const std::function<void(const HubDownloadPlan&)>& planned) {
    std::error_code ec;
    if (fs::is_directory(argument, ec)) return argument;
    const auto id = parseHubId(argument);
    if (!id) return argument;
    const std::string root = options.cacheRoot.empty() ? hubCacheRoot() : options.cacheRoot;
    auto snapshot = resolveHubSnapshot(*id, root);
    if (snapshot) return snapshot;
    if (hubOffline()) return resolveModelArgument(argument);
    const std::string missing = "'" + argument + "' is not a folder, and " + snapshot.error();
    HubDownloadOptions withRoot = options;
    withRoot.cacheRoot = root;
    auto plan = planHubDownload(*id, withRoot);
    if (!plan) return Error{missing + "; downloading it failed: " + plan.error()};
    if (planned) planned(*plan);
    auto folder = downloadHubModel(*plan, withRoot);
    if (!folder) return Error{missing + "; downloading it failed: " + folder.error()};
    return folder;
}

} // namespace attnlab::model
