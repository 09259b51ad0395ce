// libFuzzer harness: the Hugging Face cache as AttnLab reads it. The input is a model argument
// (what --model takes: ORG/NAME[@REVISION]), the ref file of that revision, and a snapshot's
// config.json, separated by "\n--8<--\n" lines (fuzz::splitSections). When the argument is a
// Hub id, a cache holding that repository is written (refs/REVISION with the ref's bytes, one
// snapshot with the config.json), then the revision is resolved and the cache listed. A
// resolved snapshot is one of the repository's own snapshot folders.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "attnlab/model/hub_cache.h"
#include "fuzz_support.h"

using namespace attnlab;
using namespace attnlab::model;
namespace fs = std::filesystem;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto parts = fuzz::splitSections(data, size, 3);
    const auto id = parseHubId(parts[0]);
    if (!id) return 0;
    // The rules of a Hub id keep its folder and ref inside the cache.
    if (id->repo.empty() || id->revision.empty() || id->revision.front() == '/' ||
        id->revision.find("..") != std::string::npos || id->repo.find("..") != std::string::npos)
        std::abort();
    const fs::path cache = fuzz::emptyFolder("hub_cache");
    const fs::path repo = hubRepoFolder(cache.string(), id->repo);
    if (repo.parent_path() != cache) std::abort();
    const std::string commit = "0123456789abcdef0123456789abcdef01234567";
    std::error_code error;
    fs::create_directories(repo / "snapshots" / commit, error);
    if (error) std::abort();
    if (parts.size() > 1) {
        const fs::path ref = repo / "refs" / id->revision;
        fs::create_directories(ref.parent_path(), error);
        // A revision the file system refuses (a name over its length limit) gets no ref.
        if (!error && !fs::exists(ref, error))
            std::ofstream(ref, std::ios::binary)
                .write(parts[1].data(), static_cast<std::streamsize>(parts[1].size()));
    }
    if (parts.size() > 2) fuzz::writeFile(repo / "snapshots" / commit, "config.json", parts[2]);

    auto snapshot = resolveHubSnapshot(*id, cache.string());
    if (snapshot && fs::path(*snapshot).parent_path() != repo / "snapshots") std::abort();
    const auto models = listHubCache(cache.string());
    if (models.size() != 1 || models.front().snapshots.size() != 1) std::abort();
    (void)cachedModelsTable(models, cache.string());
    return 0;
}
