// The Hugging Face cache, read as huggingface_hub lays it out (file_download.py,
// constants.py, utils/_cache_manager.py): refs -> snapshot -> blob. No network.

#include "attnlab/model/hub_cache.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "attnlab/io/file_io.h"
#include "attnlab/io/json_read.h"
#include "attnlab/model/architecture.h"
#include "attnlab/model/config.h"
#include "hub_strings.h"

namespace attnlab::model {
namespace {

using hub::environment;
using hub::trimmed;

namespace fs = std::filesystem;

/// A ref file holds a 40-hex commit; anything longer is not a ref file.
constexpr std::uintmax_t kMaxRefBytes = 256;

bool isRepoChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

/// One part of a repository id: word characters, '-', '.'; starting and ending with a word
/// character (the \b of huggingface_hub's REPO_ID_REGEX).
bool isRepoPart(std::string_view part) {
    if (part.empty()) return false;
    if (!std::all_of(part.begin(), part.end(), isRepoChar)) return false;
    const auto word = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    };
    return word(part.front()) && word(part.back());
}

bool isCommitHash(std::string_view text) {
    return text.size() == 40 && std::all_of(text.begin(), text.end(), [](char c) {
               return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
           });
}

/// os.path.expanduser for a leading "~" or "~/".
std::string expandHome(const std::string& path) {
    if (path == "~" || path.rfind("~/", 0) == 0) {
        const std::string home = environment("HOME");
        if (!home.empty()) return home + path.substr(1);
    }
    return path;
}

/// huggingface_hub's HF_HOME: $HF_HOME, else $XDG_CACHE_HOME/huggingface, else
/// ~/.cache/huggingface.
fs::path hubHome() {
    if (const std::string home = environment("HF_HOME"); !home.empty()) return expandHome(home);
    if (const std::string xdg = environment("XDG_CACHE_HOME"); !xdg.empty())
        return fs::path(expandHome(xdg)) / "huggingface";
    return fs::path(expandHome("~")) / ".cache" / "huggingface";
}

/// Every ref under refs/ (branches and tags; names with '/' such as refs/pr/1 are nested
/// files), name -> the commit it holds (trimmed), sorted by name.
std::map<std::string, std::string> readRefs(const fs::path& repo) {
    std::map<std::string, std::string> refs;
    std::error_code ec;
    const fs::path folder = repo / "refs";
    if (!fs::is_directory(folder, ec)) return refs;
    for (fs::recursive_directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
        if (!it->is_regular_file(ec)) continue;
        if (it->file_size(ec) > kMaxRefBytes || ec) continue;
        std::ifstream in(it->path(), std::ios::binary);
        std::string text{std::istreambuf_iterator<char>(in), {}};
        while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
            text.pop_back();
        refs[fs::relative(it->path(), folder, ec).generic_string()] = text;
    }
    return refs;
}

std::vector<std::string> snapshotCommits(const fs::path& repo) {
    std::vector<std::string> commits;
    std::error_code ec;
    for (fs::directory_iterator it(repo / "snapshots", ec), end; !ec && it != end; it.increment(ec))
        if (it->is_directory(ec)) commits.push_back(it->path().filename().string());
    std::sort(commits.begin(), commits.end());
    return commits;
}

std::string joined(const std::vector<std::string>& items, const std::string& none) {
    if (items.empty()) return none;
    std::string text;
    for (const auto& item : items)
        text += (text.empty() ? "" : ", ") + item;
    return text;
}

} // namespace

std::string sizeText(std::uintmax_t bytes) {
    char text[32];
    if (bytes < 1000)
        std::snprintf(text, sizeof text, "%ju B", bytes);
    else if (bytes < 1000 * 1000)
        std::snprintf(text, sizeof text, "%.1f kB", double(bytes) / 1e3);
    else if (bytes < 1000ull * 1000 * 1000)
        std::snprintf(text, sizeof text, "%.1f MB", double(bytes) / 1e6);
    else
        std::snprintf(text, sizeof text, "%.1f GB", double(bytes) / 1e9);
    return text;
}

namespace {

/// The snapshot's size on disk as huggingface_hub's scan_cache_dir counts it: each distinct
/// file its entries resolve to (the blobs), once.
std::uintmax_t snapshotBytes(const fs::path& snapshot) {
    std::set<std::string> seen;
    std::uintmax_t total = 0;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(snapshot, ec), end; !ec && it != end;
         it.increment(ec)) {
        std::error_code fileError;
        if (!it->is_regular_file(fileError)) continue; // follows the link to the blob
        const fs::path target = fs::canonical(it->path(), fileError);
        if (fileError || !seen.insert(target.string()).second) continue;
        const auto size = fs::file_size(target, fileError);
        if (!fileError) total += size;
    }
    return total;
}

/// Whether AttnLab runs the snapshot, and if not why: its config read as loadModel reads it
/// (the architecture table decides), and weights in a format the loader reads.
void judge(CachedSnapshot& snapshot) {
    const fs::path folder(snapshot.folder);
    std::error_code ec;
    const fs::path configPath = folder / "config.json";
    if (!fs::exists(configPath, ec)) {
        snapshot.why = "no config.json in this snapshot";
        return;
    }
    // model_type as the file says it, even when the rest is refused.
    {
        std::ifstream in(configPath, std::ios::binary);
        const std::string text{std::istreambuf_iterator<char>(in), {}};
        if (auto json = detail::parseJson(text); json && json->is_object()) {
            if (const auto it = json->find("model_type"); it != json->end() && it->is_string())
                snapshot.modelType = it->get<std::string>();
        }
    }
    if (!snapshot.modelType.empty() && !findArchitecture(snapshot.modelType)) {
        snapshot.why = "model_type '" + snapshot.modelType + "' is not one AttnLab runs (" +
                       architectureList() + ")";
        return;
    }
    auto config = readConfig(configPath.string());
    if (!config) {
        std::string message = config.error();
        const std::string prefix = configPath.string() + ": ";
        if (message.rfind(prefix, 0) == 0)
            message = "config.json: " + message.substr(prefix.size());
        snapshot.why = message;
        return;
    }
    for (const char* weights : {"model.safetensors", "model.safetensors.index.json",
                                "pytorch_model.bin", "pytorch_model.bin.index.json"})
        if (fs::exists(folder / weights, ec)) {
            snapshot.runs = true;
            return;
        }
    snapshot.why = "no weights in this snapshot (model.safetensors or pytorch_model.bin)";
}

} // namespace

std::optional<HubId> parseHubId(std::string_view text) {
    HubId id;
    std::string_view repo = text;
    if (const auto at = text.find('@'); at != std::string_view::npos) {
        const std::string_view revision = text.substr(at + 1);
        repo = text.substr(0, at);
        if (revision.empty() || revision.front() == '/' || revision.back() == '/' ||
            revision.find("..") != std::string_view::npos ||
            revision.find("//") != std::string_view::npos ||
            !std::all_of(revision.begin(), revision.end(),
                         [](char c) { return isRepoChar(c) || c == '/'; }))
            return std::nullopt;
        id.revision = std::string(revision);
        id.revisionGiven = true;
    }
    if (repo.empty() || repo.size() > 96 || repo.find("--") != std::string_view::npos ||
        repo.find("..") != std::string_view::npos ||
        (repo.size() >= 4 && repo.substr(repo.size() - 4) == ".git"))
        return std::nullopt;
    const auto slash = repo.find('/');
    if (slash == std::string_view::npos) {
        if (!isRepoPart(repo)) return std::nullopt;
    } else if (!isRepoPart(repo.substr(0, slash)) || !isRepoPart(repo.substr(slash + 1))) {
        return std::nullopt;
    }
    id.repo = std::string(repo);
    return id;
}

std::string hubCacheRoot() {
    for (const char* name : {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"})
        if (const std::string value = environment(name); !value.empty()) return expandHome(value);
    return (hubHome() / "hub").string();
}

bool hubOffline() {
    const std::string value = environment("HF_HUB_OFFLINE");
    return !value.empty() && value != "0";
}

std::string hubToken() {
    if (const std::string token = trimmed(environment("HF_TOKEN")); !token.empty()) return token;
    std::string path = environment("HF_TOKEN_PATH");
    path = path.empty() ? (hubHome() / "token").string() : expandHome(path);
    // A token is a line; a file of kilobytes is not one.
    auto text = readFile(path, 4096);
    return text ? trimmed(*text) : std::string();
}

std::string hubRepoFolder(const std::string& cacheRoot, const std::string& repo) {
    std::string folder = "models--";
    for (char c : repo)
        folder += c == '/' ? std::string("--") : std::string(1, c);
    return (fs::path(cacheRoot) / folder).string();
}

Result<std::string> resolveHubSnapshot(const HubId& id, const std::string& cacheRoot) {
    std::error_code ec;
    const fs::path repo(hubRepoFolder(cacheRoot, id.repo));
    if (!fs::is_directory(repo, ec))
        return Error{"no model '" + id.repo + "' in the Hugging Face cache at " + cacheRoot +
                     " (no folder " + repo.filename().string() + " there)"};
    const auto refs = readRefs(repo);
    const auto commits = snapshotCommits(repo);
    std::string commit;
    if (const auto ref = refs.find(id.revision); ref != refs.end()) {
        commit = ref->second;
        if (!isCommitHash(commit))
            return Error{(repo / "refs" / id.revision).string() + " holds '" +
                         commit.substr(0, 64) + "', not a 40-digit commit hash"};
    } else if (isCommitHash(id.revision)) {
        commit = id.revision;
    } else {
        std::vector<std::string> names;
        for (const auto& [name, target] : refs)
            names.push_back(name);
        return Error{"revision '" + id.revision + "' of " + id.repo + " is not in the cache at " +
                     repo.string() + " (refs there: " + joined(names, "none") +
                     "; snapshots: " + joined(commits, "none") + ")"};
    }
    const fs::path snapshot = repo / "snapshots" / commit;
    if (!fs::is_directory(snapshot, ec))
        return Error{id.repo + "@" + id.revision + " is commit " + commit +
                     ", whose snapshot is not in the cache (no folder " + snapshot.string() +
                     "; snapshots there: " + joined(commits, "none") + ")"};
    return snapshot.string();
}

Result<std::string> resolveModelArgument(const std::string& argument) {
    std::error_code ec;
    if (fs::is_directory(argument, ec)) return argument;
    const auto id = parseHubId(argument);
    if (!id) return argument;
    const std::string root = hubCacheRoot();
    auto snapshot = resolveHubSnapshot(*id, root);
    if (snapshot) return snapshot;
    const std::string how =
        hubOffline() ? "HF_HUB_OFFLINE is set; AttnLab reads the cache only"
                     : "it is not downloaded yet (attnlab downloads it from the Hub when it opens "
                       "it, or give a folder)";
    return Error{"'" + argument + "' is not a folder, and " + snapshot.error() + "; " + how};
}

CachedSnapshot describeModelFolder(const std::string& folder) {
    CachedSnapshot snapshot;
    snapshot.folder = folder;
    snapshot.bytes = snapshotBytes(folder);
    judge(snapshot);
    return snapshot;
}

std::vector<CachedModel> listHubCache(const std::string& cacheRoot) {
    std::vector<CachedModel> models;
    std::error_code ec;
    for (fs::directory_iterator it(cacheRoot, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.rfind("models--", 0) != 0 || !it->is_directory(ec)) continue;
        CachedModel model;
        std::string rest = name.substr(8);
        if (const auto dash = rest.find("--"); dash != std::string::npos)
            rest.replace(dash, 2, "/");
        model.id = rest;
        const auto refs = readRefs(it->path());
        for (const auto& commit : snapshotCommits(it->path())) {
            CachedSnapshot snapshot =
                describeModelFolder((it->path() / "snapshots" / commit).string());
            snapshot.commit = commit;
            for (const auto& [ref, target] : refs)
                if (target == commit) snapshot.refs.push_back(ref);
            model.snapshots.push_back(std::move(snapshot));
        }
        // Snapshots with a ref first ("main" before the others), then by commit.
        std::stable_sort(model.snapshots.begin(), model.snapshots.end(),
                         [](const CachedSnapshot& a, const CachedSnapshot& b) {
                             const auto key = [](const CachedSnapshot& s) {
                                 const bool main = std::find(s.refs.begin(), s.refs.end(),
                                                             "main") != s.refs.end();
                                 return std::make_tuple(!main, s.refs.empty(),
                                                        s.refs.empty() ? "" : s.refs.front());
                             };
                             return key(a) < key(b);
                         });
        models.push_back(std::move(model));
    }
    std::sort(models.begin(), models.end(),
              [](const CachedModel& a, const CachedModel& b) { return a.id < b.id; });
    return models;
}

std::string cachedModelsTable(const std::vector<CachedModel>& models,
                              const std::string& cacheRoot) {
    std::ostringstream out;
    out << "Hugging Face cache: " << cacheRoot << '\n';
    if (models.empty()) {
        out << "no models in the cache\n";
        return out.str();
    }
    std::vector<std::vector<std::string>> rows = {
        {"id", "revision", "commit", "size", "model_type", "runs"}};
    for (const auto& model : models)
        for (const auto& s : model.snapshots)
            rows.push_back({model.id, s.refs.empty() ? "-" : joined(s.refs, ""),
                            s.commit.substr(0, 12), sizeText(s.bytes),
                            s.modelType.empty() ? "-" : s.modelType,
                            s.runs ? "yes" : "no: " + s.why});
    std::vector<std::size_t> widths(rows.front().size(), 0);
    for (const auto& row : rows)
        for (std::size_t c = 0; c + 1 < row.size(); ++c)
            widths[c] = std::max(widths[c], row[c].size());
    for (const auto& row : rows) {
        for (std::size_t c = 0; c < row.size(); ++c) {
            out << row[c];
            if (c + 1 < row.size()) out << std::string(widths[c] - row[c].size() + 2, ' ');
        }
        out << '\n';
    }
    return out.str();
}

} // namespace attnlab::model
