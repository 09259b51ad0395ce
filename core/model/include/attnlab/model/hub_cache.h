#pragma once
/// Models by their Hugging Face Hub id, found in the cache huggingface_hub (and transformers)
/// download into, laid out exactly as huggingface_hub lays it out, so the two share one cache:
///
///   CACHE/models--ORG--NAME/refs/REVISION          the commit hash a branch or tag points to
///   CACHE/models--ORG--NAME/snapshots/COMMIT/FILE  a symbolic link to ../../blobs/ETAG
///   CACHE/models--ORG--NAME/blobs/ETAG             the file's bytes
///
/// CACHE is $HF_HUB_CACHE, else $HUGGINGFACE_HUB_CACHE (its older name), else $HF_HOME/hub,
/// else $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub (huggingface_hub's
/// constants.py; an empty variable counts as unset, a leading ~ is the home folder). Nothing
/// here touches the network: a model that is not in the cache is an error saying where the
/// cache is (hub_download.h fetches it).
///
///   auto folder = resolveModelArgument("Qwen/Qwen2.5-0.5B@main");   // Result<std::string>
///   auto model = loadModel(*folder);

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnlab/base/result.h"

namespace attnlab::model {

/// ORG/NAME or NAME, and the revision after '@' ("main" when none is given).
struct HubId {
    std::string repo;
    std::string revision = "main";
    bool revisionGiven = false;
};

/// `text` read as a Hub id, ORG/NAME[@REVISION] or NAME[@REVISION], with huggingface_hub's
/// rules for a repository id (letters, digits, '-', '_', '.'; no "--" or ".."; neither part
/// starting or ending with '-' or '.'; at most 96 characters). A revision is a branch, tag or
/// commit (letters, digits, '-', '_', '.', '/', no ".." and no leading '/'). nullopt when
/// `text` is no such id (a path such as "./gpt2", "/models/gpt2" or "a/b/c").
std::optional<HubId> parseHubId(std::string_view text);

/// The cache folder from the environment, as huggingface_hub finds it (see above).
std::string hubCacheRoot();

/// HF_HUB_OFFLINE is set to anything but "" or "0": nothing may touch the network.
bool hubOffline();

/// The access token for downloads (hub_download.h), as huggingface_hub finds it: $HF_TOKEN,
/// else the file at $HF_TOKEN_PATH, else $HF_HOME/token (HF_HOME as for the cache: else
/// $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface), trimmed; "" when there is none.
std::string hubToken();

/// The folder of one repository in the cache: CACHE/models--ORG--NAME.
std::string hubRepoFolder(const std::string& cacheRoot, const std::string& repo);

/// The snapshot folder of `id` in the cache at `cacheRoot`: the revision read from
/// refs/REVISION (a commit hash), or the revision itself when it is a 40-hex commit with a
/// snapshot. Errors: no such model in the cache (naming the folder looked for), the revision
/// not found (listing the refs and snapshots there), a ref that does not hold a commit, a
/// commit without a snapshot.
Result<std::string> resolveHubSnapshot(const HubId& id, const std::string& cacheRoot);

/// What `--model` (and the window's --model) opens: `argument` itself when it is a folder,
/// as always; otherwise, when it reads as a Hub id, the snapshot folder of that model in the
/// cache at hubCacheRoot(), or the error saying it is neither a folder nor in the cache.
/// Anything else is returned as it is (the loader then says the folder does not exist).
Result<std::string> resolveModelArgument(const std::string& argument);

/// One snapshot of a cached model: what `attnlab model --list` prints.
struct CachedSnapshot {
    std::string commit;
    std::vector<std::string> refs; ///< the refs that point to it ("main", "v1.0"), sorted
    std::string folder;            ///< CACHE/models--ORG--NAME/snapshots/COMMIT
    std::uintmax_t bytes = 0;      ///< the distinct blobs its files link to, on disk
    std::string modelType;         ///< config.json's model_type; "" when it has none
    bool runs = false;             ///< AttnLab runs it (config read, weights present)
    std::string why;               ///< when it does not: why, in one line
};

struct CachedModel {
    std::string id; ///< ORG/NAME or NAME
    std::vector<CachedSnapshot> snapshots;
};

/// Every model repository in the cache at `cacheRoot` (models--*; datasets and spaces are
/// left out), sorted by id, each with its snapshots (sorted by ref, then commit). An
/// absent cache folder is an empty list.
std::vector<CachedModel> listHubCache(const std::string& cacheRoot);

/// A model folder judged as listHubCache judges a snapshot (no commit or refs): its size (each
/// distinct file its entries resolve to, once), config.json's model_type, whether AttnLab runs
/// it and if not why. For the bundled models beside the cache's in the window's list.
CachedSnapshot describeModelFolder(const std::string& folder);

/// A size as the list prints it: "876.9 kB", "2.5 GB" (powers of 1000, as huggingface_hub).
std::string sizeText(std::uintmax_t bytes);

/// The list as a table, one row per snapshot: id, revision, commit (12 digits), size,
/// model_type, and "yes" or "no: why". `cacheRoot` is named in its first line.
std::string cachedModelsTable(const std::vector<CachedModel>& models, const std::string& cacheRoot);

} // namespace attnlab::model
