// attnlab: the window with no command; `compute`, `bench`, `model` and `tokenize` run
// headless. Built twice (app/CMakeLists.txt): attnlab, without Qt, runs attnlab-window for what
// needs Qt; attnlab-window has everything.

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#ifdef ATTNLAB_WINDOW_BESIDE
#include <climits>
#include <unistd.h>
#endif

#include "attnlab/base/isa.h"
#include "commands.h"

namespace {

void printUsage(std::ostream& out) {
    out << "usage: attnlab [SESSION.json | LESSON.json] [window options]   open the window\n"
           "       attnlab compute --q Q.npy --k K.npy --v V.npy --out O.npy [options]\n"
           "       attnlab render  (--session S.json | --tokens \"...\") --view NAME --out F\n"
           "       attnlab bench   [--sizes 1024,4096] [--dim 64] [--heads 8]\n"
           "       attnlab model   --model DIR (--text \"...\" | --ids N,...) --out F.npz\n"
           "       attnlab tokenize --tokenizer FILE|DIR --text \"...\" [--text ...] "
           "[--no-special]\n"
           "       attnlab --version   the version and the kernel target this CPU runs\n"
           "run a command with --help for its options\n"
           "\n"
           "window options:\n"
           "  --language en|zh_CN     the language (default: the saved choice, else the system's)\n"
           "  --theme light|dark|projector\n"
           "                          the theme of this run (View > Theme keeps one)\n"
           "  --model DIR             open a model folder (config.json, *.safetensors, tokenizer)\n"
           "  --text TEXT             the text to run (the model's, else the session's)\n"
           "  --lesson FILE|NAME      open a lesson at its first step (a file, or a bundled\n"
           "                          lesson's name such as 16_translation)\n"
           "  --example NAME          open a bundled example session by file name\n"
           "  --screenshots DIR       save a PNG of each view (with a lesson: of each step)\n"
           "                          into DIR, then exit; --size WxH sets the window size\n"
           "  --size WxH              the window's size\n";
}

/// "attnlab 0.1.0", then the kernel target in use and those this CPU runs.
void printVersion() {
    std::cout << "attnlab " << ATTNLAB_VERSION
              << "\nkernels: " << attnlab::isaName(attnlab::activeIsa()) << " (this CPU runs";
    for (attnlab::Isa isa : attnlab::kAllIsas)
        if (attnlab::isaSupported(isa)) std::cout << ' ' << attnlab::isaName(isa);
    std::cout << "; ATTNLAB_ISA=avx512|avx2|generic chooses)\n";
    if (auto problem = attnlab::isaOverrideProblem()) std::cerr << "attnlab: " << *problem << "\n";
}

/// The commands that run without Qt, in the binary built without it as in the window's.
struct HeadlessCommand {
    const char* name;
    int (*run)(int, char**);
};
constexpr HeadlessCommand kHeadlessCommands[] = {
    {"compute", attnlab::app::computeCommand},
    {"bench", attnlab::app::benchCommand},
    {"model", attnlab::app::modelCommand},
    {"tokenize", attnlab::app::tokenizeCommand},
};

const HeadlessCommand* headlessCommand(const char* name) {
    for (const HeadlessCommand& command : kHeadlessCommands)
        if (std::strcmp(name, command.name) == 0) return &command;
    return nullptr;
}

#ifdef ATTNLAB_WINDOW_BESIDE
/// Whether this run needs Qt: the window (no command, or a session or lesson file), render, or
/// a model command that reads an image (Qt's image readers).
bool needsWindow(int argc, char** argv) {
    if (argc < 2) return true;
    for (const char* own : {"--version", "--help", "-h"})
        if (std::strcmp(argv[1], own) == 0) return false;
    const HeadlessCommand* command = headlessCommand(argv[1]);
    if (!command) return true;
    if (command->run != attnlab::app::modelCommand) return false;
    for (int i = 2; i < argc; ++i)
        if (std::strncmp(argv[i], "--image", 7) == 0 && (argv[i][7] == 0 || argv[i][7] == '='))
            return true;
    return false;
}

/// Runs attnlab-window from this program's folder in this process's place, with the same
/// arguments and environment. Returns only when it could not.
int runWindow(char** argv) {
    char self[PATH_MAX];
    const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
    std::string path = length > 0 ? std::string(self, static_cast<std::size_t>(length)) : "";
    path = path.substr(0, path.rfind('/') + 1) + "attnlab-window";
    execv(path.c_str(), argv);
    std::cerr << "attnlab: the window and render are in " << path << ", which does not run ("
              << std::strerror(errno) << ")\n";
    return 2;
}
#endif

} // namespace

int main(int argc, char** argv) {
#ifdef ATTNLAB_WINDOW_BESIDE
    if (needsWindow(argc, argv)) return runWindow(argv);
#endif
    using namespace attnlab::app;
#if defined(__GLIBC__)
    // A long text's buffers (a layer's activations, the run's q/k/v blocks: MBs each) get pages
    // of their own, returned when freed. glibc's default threshold rises to 32 MB after the
    // first such buffer is freed; then they share the heap with long-lived blocks, and the
    // memory between them stays resident (~50 MB more at 2 000 tokens of a 0.5 B model).
    // Fixing it also fixes the heap's trim threshold at 128 KB, which returned and took back
    // the top of the heap on every layer of a short text (system time x2.5 at 128 tokens):
    // twice the mmap threshold, as glibc's own adjustment would set.
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
    mallopt(M_TRIM_THRESHOLD, 8 << 20);
#endif
    if (argc >= 2) {
        const char* command = argv[1];
        if (const HeadlessCommand* headless = headlessCommand(command))
            return headless->run(argc - 2, argv + 2);
#ifdef ATTNLAB_HAS_UI
        if (std::strcmp(command, "render") == 0) return renderCommand(argc - 2, argv + 2);
#endif
        if (std::strcmp(command, "--version") == 0) {
            printVersion();
            return 0;
        }
        if (std::strcmp(command, "--help") == 0 || std::strcmp(command, "-h") == 0) {
            printUsage(std::cout);
            return 0;
        }
    }
#ifdef ATTNLAB_HAS_UI
    return guiMain(argc, argv);
#else
    printUsage(std::cerr);
    return 2;
#endif
}
