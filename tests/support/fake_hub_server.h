#pragma once
// A loopback HTTP server that answers as the Hugging Face Hub does, for the download tests:
//
//   GET  /api/models/REPO/revision/REV        {"sha", "siblings": [{"rfilename"}]}   (model info)
//   GET  /api/models/REPO/tree/REV            [{"type", "path", "oid", "size", "lfs"}]
//   POST /api/models/REPO/paths-info/REV      the same for the paths asked, with "lastCommit"
//   HEAD/GET /REPO/resolve/REV/FILE           a git file: 200, ETag = its git blob sha1;
//                                             an LFS file: 302 to /cdn/SHA256 (an absolute
//                                             address), X-Linked-Etag = its sha256, X-Linked-Size
//   GET  /cdn/SHA256                          the bytes
//
// every answer with X-Repo-Commit where the Hub sends it, Range requests answered with 206 and
// Content-Range, a renamed repository's addresses with a relative 307. Knobs make it fail as
// servers do: a token required (401 without one, 403 for another: a gated repository), a file cut
// after N bytes on its first download, a file whose bytes are not what its etag says. It listens on
// 127.0.0.1 only, on a port the system picks, and stops with the object. The hashes come from
// OpenSSL, not from the code under test.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace attnlab::test {

inline std::string hexDigest(const std::string& bytes, bool gitBlob) {
    EVP_MD_CTX* context = EVP_MD_CTX_new();
    EVP_DigestInit_ex(context, gitBlob ? EVP_sha1() : EVP_sha256(), nullptr);
    if (gitBlob) {
        const std::string prefix = "blob " + std::to_string(bytes.size()) + '\0';
        EVP_DigestUpdate(context, prefix.data(), prefix.size());
    }
    EVP_DigestUpdate(context, bytes.data(), bytes.size());
    unsigned char value[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    EVP_DigestFinal_ex(context, value, &size);
    EVP_MD_CTX_free(context);
    std::string hex;
    for (unsigned int i = 0; i < size; ++i) {
        static constexpr char kHex[] = "0123456789abcdef";
        hex += kHex[value[i] >> 4];
        hex += kHex[value[i] & 15];
    }
    return hex;
}

class FakeHubServer {
public:
    struct File {
        File(std::string name_, std::string bytes_, bool lfs_ = false)
            : name(std::move(name_)), bytes(std::move(bytes_)), lfs(lfs_) {}
        std::string name;
        std::string bytes;
        bool lfs = false;
        std::string servedBytes;  ///< when not empty: what is sent instead (a wrong hash)
        std::size_t cutAfter = 0; ///< when not 0: the first GET sends this many bytes and closes
        int pauseMsPer64k = 0;    ///< a slow server: this pause after every 64 KiB of the body
    };

    FakeHubServer() {
        m_listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        address.sin_port = 0;
        ::bind(m_listener, reinterpret_cast<sockaddr*>(&address), sizeof address);
        ::listen(m_listener, 16);
        socklen_t length = sizeof address;
        ::getsockname(m_listener, reinterpret_cast<sockaddr*>(&address), &length);
        m_port = ntohs(address.sin_port);
        m_thread = std::thread([this] { serve(); });
    }
    ~FakeHubServer() {
        m_stop = true;
        m_thread.join();
        ::close(m_listener);
    }
    FakeHubServer(const FakeHubServer&) = delete;
    FakeHubServer& operator=(const FakeHubServer&) = delete;

    std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(m_port); }

    /// A repository at `commit`, reachable by that commit and by each of `refs`.
    void addRepo(const std::string& repo, const std::string& commit, std::vector<File> files,
                 std::vector<std::string> refs = {"main"}) {
        std::lock_guard lock(m_mutex);
        Repo& r = m_repos[repo];
        r.commit = commit;
        r.files = std::move(files);
        r.refs = std::move(refs);
    }
    /// Every answer about `repo` (not the CDN's) asks for this token.
    void requireToken(const std::string& repo, const std::string& token) {
        std::lock_guard lock(m_mutex);
        m_repos[repo].token = token;
    }
    /// `from` was renamed `to`: its API and resolve addresses answer 307 with a relative
    /// Location naming `to`, as the Hub answers for a renamed repository.
    void renameRepo(const std::string& from, const std::string& to) {
        std::lock_guard lock(m_mutex);
        m_renamed[from] = to;
    }
    /// The requests so far, "METHOD PATH" with " Range: ..." when one was asked.
    std::vector<std::string> requests() const {
        std::lock_guard lock(m_mutex);
        return m_requests;
    }
    std::size_t requestCount() const {
        std::lock_guard lock(m_mutex);
        return m_requests.size();
    }

private:
    struct Repo {
        std::string commit;
        std::vector<File> files;
        std::vector<std::string> refs;
        std::string token;
        std::map<std::string, int> gets; // file -> GETs of its bytes so far
    };
    struct HttpRequest {
        std::string method, path, query, body;
        std::map<std::string, std::string> headers;
    };

    void serve() {
        while (!m_stop) {
            pollfd fd{m_listener, POLLIN, 0};
            if (::poll(&fd, 1, 50) <= 0) continue;
            const int client = ::accept4(m_listener, nullptr, nullptr, SOCK_CLOEXEC);
            if (client < 0) continue;
            if (auto request = readRequest(client)) answer(client, *request);
            ::close(client);
        }
    }

    static std::optional<HttpRequest> readRequest(int client) {
        std::string data;
        char buffer[8192];
        std::size_t end = std::string::npos;
        while ((end = data.find("\r\n\r\n")) == std::string::npos) {
            pollfd fd{client, POLLIN, 0};
            if (::poll(&fd, 1, 5000) <= 0) return std::nullopt;
            const auto got = ::recv(client, buffer, sizeof buffer, 0);
            if (got <= 0) return std::nullopt;
            data.append(buffer, static_cast<std::size_t>(got));
        }
        HttpRequest request;
        std::istringstream head(data.substr(0, end));
        std::string line, version;
        std::getline(head, line);
        std::istringstream first(line);
        std::string target;
        first >> request.method >> target >> version;
        const auto question = target.find('?');
        request.path = target.substr(0, question);
        if (question != std::string::npos) request.query = target.substr(question + 1);
        while (std::getline(head, line)) {
            if (!line.empty() && line.back() == '\r') line.pop_back();
            const auto colon = line.find(':');
            if (colon == std::string::npos) continue;
            std::string name = line.substr(0, colon);
            for (char& c : name)
                c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            std::string value = line.substr(colon + 1);
            while (!value.empty() && value.front() == ' ')
                value.erase(0, 1);
            request.headers[name] = value;
        }
        request.body = data.substr(end + 4);
        if (const auto it = request.headers.find("content-length"); it != request.headers.end()) {
            const std::size_t length = std::stoul(it->second);
            while (request.body.size() < length) {
                const auto got = ::recv(client, buffer, sizeof buffer, 0);
                if (got <= 0) break;
                request.body.append(buffer, static_cast<std::size_t>(got));
            }
        }
        return request;
    }

    static void sendAll(int client, const std::string& data) {
        std::size_t sent = 0;
        while (sent < data.size()) {
            const auto n = ::send(client, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
            if (n <= 0) return;
            sent += static_cast<std::size_t>(n);
        }
    }

    static void respond(int client, const HttpRequest& request, int status,
                        std::map<std::string, std::string> headers, const std::string& body,
                        std::size_t cut = 0, int pauseMs = 0) {
        static const std::map<int, std::string> reasons = {
            {200, "OK"},           {206, "Partial Content"},
            {302, "Found"},        {307, "Temporary Redirect"},
            {401, "Unauthorized"}, {403, "Forbidden"},
            {404, "Not Found"},    {416, "Range Not Satisfiable"}};
        std::string text = "HTTP/1.1 " + std::to_string(status) + " " + reasons.at(status) + "\r\n";
        headers["Content-Length"] = std::to_string(body.size());
        headers["Connection"] = "close";
        for (const auto& [name, value] : headers)
            text += name + ": " + value + "\r\n";
        text += "\r\n";
        sendAll(client, text);
        if (request.method == "HEAD") return;
        const std::string sent = cut ? body.substr(0, cut) : body;
        const std::size_t chunk =
            pauseMs ? std::size_t(64) << 10 : std::max<std::size_t>(sent.size(), 1);
        for (std::size_t at = 0; at < sent.size(); at += chunk) {
            sendAll(client, sent.substr(at, chunk));
            if (pauseMs) std::this_thread::sleep_for(std::chrono::milliseconds(pauseMs));
        }
    }

    /// A body, or the part a Range asks for (206 with Content-Range).
    static void respondBytes(int client, const HttpRequest& request,
                             std::map<std::string, std::string> headers, const std::string& bytes,
                             std::size_t cut, int pauseMs = 0) {
        const auto range = request.headers.find("range");
        if (range == request.headers.end()) {
            respond(client, request, 200, headers, bytes, cut, pauseMs);
            return;
        }
        // "bytes=START-" or "bytes=START-END"
        const std::string spec = range->second.substr(6);
        const auto dash = spec.find('-');
        const std::size_t start = std::stoul(spec.substr(0, dash));
        std::size_t last = bytes.empty() ? 0 : bytes.size() - 1;
        if (dash + 1 < spec.size()) last = std::min(last, std::stoul(spec.substr(dash + 1)));
        if (start >= bytes.size()) {
            headers["Content-Range"] = "bytes */" + std::to_string(bytes.size());
            respond(client, request, 416, headers, "");
            return;
        }
        headers["Content-Range"] = "bytes " + std::to_string(start) + "-" + std::to_string(last) +
                                   "/" + std::to_string(bytes.size());
        respond(client, request, 206, headers, bytes.substr(start, last - start + 1), cut, pauseMs);
    }

    static nlohmann::json entry(const File& file, const std::string& commit, bool lastCommit) {
        nlohmann::json item = {{"type", "file"},
                               {"path", file.name},
                               {"oid", hexDigest(file.bytes, true)},
                               {"size", file.bytes.size()}};
        if (file.lfs)
            item["lfs"] = {{"oid", hexDigest(file.bytes, false)},
                           {"size", file.bytes.size()},
                           {"pointerSize", 134}};
        if (lastCommit)
            item["lastCommit"] = {
                {"id", commit}, {"title", "upload"}, {"date", "2026-01-01T00:00:00.000Z"}};
        return item;
    }

    void answer(int client, const HttpRequest& request) {
        std::unique_lock lock(m_mutex);
        const auto range = request.headers.find("range");
        m_requests.push_back(request.method + " " + request.path +
                             (range == request.headers.end() ? "" : " Range: " + range->second));
        const std::string path = request.path;

        if (path.rfind("/cdn/", 0) == 0) {
            const std::string sha = path.substr(5);
            for (auto& [name, repo] : m_repos)
                for (auto& file : repo.files)
                    if (file.lfs && hexDigest(file.bytes, false) == sha) {
                        const bool first = request.method == "GET" && repo.gets[file.name]++ == 0;
                        const std::string& bytes =
                            file.servedBytes.empty() ? file.bytes : file.servedBytes;
                        respondBytes(client, request,
                                     {{"ETag", "\"cdn-" + sha.substr(0, 8) + "\""}}, bytes,
                                     first ? file.cutAfter : 0, file.pauseMsPer64k);
                        return;
                    }
            respond(client, request, 404, {}, "no such object");
            return;
        }

        for (const auto& [from, to] : m_renamed)
            for (const std::string prefix : {"/api/models/", "/"}) {
                const std::string old = prefix + from + "/";
                if (path.rfind(old, 0) == 0) {
                    respond(client, request, 307,
                            {{"Location", prefix + to + "/" + path.substr(old.size()) +
                                              (request.query.empty() ? "" : "?" + request.query)}},
                            "");
                    return;
                }
            }

        // /api/models/REPO/(revision|tree|paths-info)/REV or /REPO/resolve/REV/FILE, where REPO
        // is ORG/NAME or NAME.
        for (auto& [name, repo] : m_repos) {
            const std::string api = "/api/models/" + name + "/";
            const std::string resolve = "/" + name + "/resolve/";
            const bool isApi = path.rfind(api, 0) == 0;
            const bool isResolve = path.rfind(resolve, 0) == 0;
            if (!isApi && !isResolve) continue;
            if (!repo.token.empty()) {
                const auto auth = request.headers.find("authorization");
                if (auth == request.headers.end()) {
                    respond(client, request, 401,
                            {{"X-Error-Code", "GatedRepo"},
                             {"X-Error-Message", "Access to model " + name + " is restricted."}},
                            "");
                    return;
                }
                if (auth->second != "Bearer " + repo.token) {
                    respond(client, request, 403,
                            {{"X-Error-Code", "GatedRepo"},
                             {"X-Error-Message", "Access to model " + name +
                                                     " is restricted and you are not in the "
                                                     "authorized list."}},
                            "");
                    return;
                }
            }
            std::string rest = path.substr(isApi ? api.size() : resolve.size());
            std::string kind;
            if (isApi) {
                const auto slash = rest.find('/');
                kind = rest.substr(0, slash);
                rest = slash == std::string::npos ? "" : rest.substr(slash + 1);
            }
            const auto slash = rest.find('/');
            std::string revision = rest.substr(0, slash);
            const std::string file = slash == std::string::npos ? "" : rest.substr(slash + 1);
            if (revision == "HEAD") revision = "main";
            const bool known =
                revision == repo.commit ||
                std::find(repo.refs.begin(), repo.refs.end(), revision) != repo.refs.end();
            if (!known) {
                respond(client, request, 404,
                        {{"X-Error-Code", "RevisionNotFound"},
                         {"X-Error-Message", "Invalid rev id: " + revision}},
                        "");
                return;
            }
            const std::map<std::string, std::string> commitHeader = {
                {"X-Repo-Commit", repo.commit}};
            if (kind == "revision") {
                nlohmann::json siblings = nlohmann::json::array();
                for (const auto& f : repo.files)
                    siblings.push_back({{"rfilename", f.name}});
                respond(client, request, 200, {{"Content-Type", "application/json"}},
                        nlohmann::json{{"_id", "0123"},
                                       {"id", name},
                                       {"modelId", name},
                                       {"sha", repo.commit},
                                       {"private", false},
                                       {"lastModified", "2026-01-01T00:00:00.000Z"},
                                       {"siblings", siblings}}
                            .dump());
                return;
            }
            if (kind == "tree" || kind == "paths-info") {
                std::vector<std::string> wanted;
                if (kind == "paths-info") {
                    const auto body = nlohmann::json::parse(request.body, nullptr, false);
                    if (body.is_object() && body.contains("paths"))
                        for (const auto& p : body["paths"])
                            wanted.push_back(p.get<std::string>());
                }
                nlohmann::json items = nlohmann::json::array();
                for (const auto& f : repo.files)
                    if (kind == "tree" ||
                        std::find(wanted.begin(), wanted.end(), f.name) != wanted.end())
                        items.push_back(entry(f, repo.commit, kind == "paths-info"));
                respond(client, request, 200, {{"Content-Type", "application/json"}}, items.dump());
                return;
            }
            if (isResolve) {
                for (auto& f : repo.files) {
                    if (f.name != file) continue;
                    if (f.lfs) {
                        const std::string sha = hexDigest(f.bytes, false);
                        respond(client, request, 302,
                                {{"X-Repo-Commit", repo.commit},
                                 {"X-Linked-Etag", "\"" + sha + "\""},
                                 {"X-Linked-Size", std::to_string(f.bytes.size())},
                                 {"ETag", "\"" + hexDigest(f.bytes, true) + "\""},
                                 {"Location", endpoint() + "/cdn/" + sha}},
                                "Found. Redirecting to the CDN");
                        return;
                    }
                    auto headers = commitHeader;
                    headers["ETag"] = "\"" + hexDigest(f.bytes, true) + "\"";
                    const bool first = request.method == "GET" && repo.gets[f.name]++ == 0;
                    respondBytes(client, request, headers,
                                 f.servedBytes.empty() ? f.bytes : f.servedBytes,
                                 first ? f.cutAfter : 0);
                    return;
                }
                respond(client, request, 404,
                        {{"X-Error-Code", "EntryNotFound"}, {"X-Error-Message", "no " + file}}, "");
                return;
            }
        }
        respond(client, request, 404,
                {{"X-Error-Code", "RepoNotFound"}, {"X-Error-Message", "Repository not found"}},
                "");
    }

    int m_listener = -1;
    std::uint16_t m_port = 0;
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
    mutable std::mutex m_mutex;
    std::map<std::string, Repo> m_repos;
    std::map<std::string, std::string> m_renamed;
    std::vector<std::string> m_requests;
};

} // namespace attnlab::test
