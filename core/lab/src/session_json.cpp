// Sessions as versioned JSON (docs/session-format.md): writing, reading with every key
// optional and every wrong type or out-of-range number refused naming the key, and files.

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnlab/io/file_io.h"
#include "attnlab/io/json_read.h"
#include "attnlab/lab/session.h"

namespace attnlab {

namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

using detail::fail;
using detail::JsonProblem;
using detail::parseJson;
using detail::typeOf;

/// One JSON object being read: every getter leaves its target alone when the key is
/// missing and throws JsonProblem naming "section.key" when the value has the wrong type.
class Section {
public:
    Section(const Json* object, std::string name) : m_object(object), m_name(std::move(name)) {}

    static Section child(const Json& root, const std::string& name) {
        const auto it = root.find(name);
        if (it == root.end()) return Section(nullptr, name);
        if (!it->is_object()) fail(name, "expected an object, got " + typeOf(*it));
        return Section(&*it, name);
    }

    const Json* find(const char* key) const {
        if (!m_object) return nullptr;
        const auto it = m_object->find(key);
        return it == m_object->end() ? nullptr : &*it;
    }

    std::string path(const char* key) const { return m_name + "." + key; }

    void get(const char* key, std::string& target) const {
        if (const Json* v = find(key)) {
            if (!v->is_string()) fail(path(key), "expected a string, got " + typeOf(*v));
            target = v->get<std::string>();
        }
    }
    void get(const char* key, bool& target) const {
        if (const Json* v = find(key)) {
            if (!v->is_boolean()) fail(path(key), "expected true or false, got " + typeOf(*v));
            target = v->get<bool>();
        }
    }
    void get(const char* key, double& target) const {
        if (const Json* v = find(key)) {
            if (!v->is_number()) fail(path(key), "expected a number, got " + typeOf(*v));
            target = v->get<double>();
        }
    }
    /// A number that must lie in [low, high]; `what` names it in the message.
    void get(const char* key, double& target, double low, double high, const char* what) const {
        get(key, target);
        if (find(key)) inRange(target, low, high, path(key), what);
    }
    void get(const char* key, Index& target) const {
        if (const Json* v = find(key)) target = wholeNumber(*v, path(key));
    }
    void get(const char* key, std::uint64_t& target) const {
        if (const Json* v = find(key)) {
            if (v->is_number_unsigned())
                target = v->get<std::uint64_t>();
            else {
                const Index value = wholeNumber(*v, path(key));
                if (value < 0) fail(path(key), "expected a number >= 0");
                target = static_cast<std::uint64_t>(value);
            }
        }
    }
    /// null (or missing) keeps/clears nothing: null means "not set", a number sets it.
    void get(const char* key, std::optional<double>& target) const {
        if (const Json* v = find(key)) {
            if (v->is_null())
                target.reset();
            else if (v->is_number())
                target = v->get<double>();
            else
                fail(path(key), "expected a number or null, got " + typeOf(*v));
        }
    }
    void get(const char* key, std::optional<double>& target, double low, double high,
             const char* what) const {
        get(key, target);
        if (find(key) && target) inRange(*target, low, high, path(key), what);
    }

    static void inRange(double value, double low, double high, const std::string& where,
                        const char* what) {
        if (!(value >= low && value <= high)) {
            std::ostringstream out;
            out << value << " is out of range: " << what << " must be between " << low << " and "
                << high;
            fail(where, out.str());
        }
    }

    static Index wholeNumber(const Json& v, const std::string& where) {
        return detail::wholeNumber(v, where);
    }

private:
    const Json* m_object;
    std::string m_name;
};

template <typename Enum, typename Parse>
void getEnum(const Section& section, const char* key, Enum& target, Parse parse,
             const char* expected) {
    std::string name;
    const Json* v = section.find(key);
    if (!v) return;
    section.get(key, name);
    const auto parsed = parse(name);
    if (!parsed)
        fail(section.path(key), "unknown value \"" + name + "\" (expected " + expected + ")");
    target = *parsed;
}

OrderedJson customToJson(const BoolMatrix& custom) {
    OrderedJson rows = OrderedJson::array();
    for (Index i = 0; i < custom.rows(); ++i) {
        OrderedJson row = OrderedJson::array();
        for (Index j = 0; j < custom.cols(); ++j)
            row.push_back(custom(i, j) ? 1 : 0);
        rows.push_back(std::move(row));
    }
    return rows;
}

BoolMatrix customFromJson(const Json& value, const std::string& where) {
    if (!value.is_array()) fail(where, "expected null or a list of rows, got " + typeOf(value));
    const auto rows = static_cast<Index>(value.size());
    Index cols = -1;
    for (Index i = 0; i < rows; ++i) {
        const Json& row = value[static_cast<std::size_t>(i)];
        if (!row.is_array())
            fail(where, "row " + std::to_string(i) + " is " + typeOf(row) + ", not a list");
        const auto count = static_cast<Index>(row.size());
        if (cols >= 0 && count != cols)
            fail(where, "row " + std::to_string(i) + " has " + std::to_string(count) +
                            " entries but row 0 has " + std::to_string(cols));
        cols = count;
    }
    BoolMatrix custom(rows, std::max<Index>(cols, 0));
    for (Index i = 0; i < rows; ++i)
        for (Index j = 0; j < custom.cols(); ++j) {
            const Json& cell = value[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
            if (cell.is_boolean())
                custom(i, j) = cell.get<bool>();
            else if (cell.is_number() && (cell.get<double>() == 0 || cell.get<double>() == 1))
                custom(i, j) = cell.get<double>() == 1;
            else
                fail(where, "cell (" + std::to_string(i) + ", " + std::to_string(j) +
                                ") must be 0, 1, true or false, got " + cell.dump());
        }
    return custom;
}

/// Puts every array of numbers (a mask row, valid_len) on one line of the pretty-printed
/// document, so a custom mask reads as a matrix. Strings are copied untouched.
std::string compactNumberArrays(const std::string& in) {
    std::string out;
    out.reserve(in.size());
    std::size_t i = 0;
    while (i < in.size()) {
        const char c = in[i];
        if (c == '"') {
            std::size_t j = i + 1;
            while (j < in.size() && in[j] != '"')
                j += in[j] == '\\' ? 2 : 1;
            out.append(in, i, j + 1 - i);
            i = j + 1;
            continue;
        }
        if (c == '[') {
            std::size_t j = i + 1;
            while (j < in.size() && in[j] != ']' && in[j] != '[' && in[j] != '{' && in[j] != '"')
                ++j;
            if (j < in.size() && in[j] == ']') {
                out += '[';
                bool space = false;
                for (std::size_t k = i + 1; k < j; ++k) {
                    const char e = in[k];
                    if (e == ' ' || e == '\n') {
                        space = true;
                        continue;
                    }
                    if (space && out.back() == ',') out += ' ';
                    space = false;
                    out += e;
                }
                out += ']';
                i = j + 1;
                continue;
            }
        }
        out += c;
        ++i;
    }
    return out;
}

/// The keys each part of a session file may hold: what sessionToJson writes. Anything else is
/// refused, never skipped: a key this AttnLab does not understand could change the computation
/// (`{"text": ...}` at the top level left the default text in place without a word).
struct KnownKeys {
    const char* section; ///< "" for the top level
    std::vector<const char*> keys;
};

const std::vector<KnownKeys>& knownKeys() {
    static const std::vector<KnownKeys> known{
        {"", {"attnlab_session", "title", "tokens", "model", "attention", "mask", "view"}},
        {"tokens", {"text", "source", "tokenizer"}},
        {"model",
         {"d_model", "heads", "kv_heads", "positional", "rope_base", "seed",
          "identity_projections"}},
        {"attention",
         {"variant", "scale", "temperature", "q_block", "kv_block", "kv_prefill", "mode",
          "dropout", "dropout_seed"}},
        {"mask", {"causal", "window", "causal_window", "valid_len", "custom"}},
        {"view",
         {"view", "colormap", "theme", "show", "head", "query", "cell_values", "color_scale",
          "color_range", "flash_step", "kv_step"}},
    };
    return known;
}

/// Throws JsonProblem for the first key of `object` (the top level, or a section) that is not
/// a session key, naming the keys it may hold and, when another section holds that key, where.
void refuseUnknownKeys(const Json& object, const KnownKeys& section) {
    for (auto it = object.begin(); it != object.end(); ++it) {
        const std::string& key = it.key();
        const auto& keys = section.keys;
        if (std::any_of(keys.begin(), keys.end(), [&](const char* k) { return key == k; }))
            continue;
        const std::string where = *section.section ? std::string(section.section) + "." : "";
        std::string message = "unknown key (";
        for (const KnownKeys& other : knownKeys())
            for (const char* k : other.keys)
                if (key == k && other.section != section.section)
                    message += "it belongs in " + std::string(other.section) + "." + k + "; ";
        message += *section.section ? std::string("the ") + section.section + " section has"
                                    : std::string("a session has");
        for (std::size_t i = 0; i < keys.size(); ++i)
            message += (i ? ", " : " ") + std::string(keys[i]);
        fail(where + key, message + ")");
    }
}

} // namespace

std::string sessionToJson(const Session& s) {
    OrderedJson root;
    root["attnlab_session"] = Session::kVersion;
    root["title"] = s.title;
    root["tokens"] = {
        {"text", s.text}, {"source", s.sourceText}, {"tokenizer", tokenizerName(s.tokenizer)}};
    root["model"] = {{"d_model", s.dModel},
                     {"heads", s.heads},
                     {"kv_heads", s.kvHeads},
                     {"positional", positionalName(s.positional)},
                     {"rope_base", s.ropeBase},
                     {"seed", s.seed},
                     {"identity_projections", s.identityProjections}};
    OrderedJson attention;
    attention["variant"] = variantName(s.variant);
    attention["scale"] = s.scale ? OrderedJson(*s.scale) : OrderedJson(nullptr);
    attention["temperature"] = s.temperature;
    attention["q_block"] = s.qBlock;
    attention["kv_block"] = s.kvBlock;
    attention["kv_prefill"] = s.kvPrefill;
    attention["mode"] = s.train ? "train" : "eval";
    attention["dropout"] = s.dropoutRate;
    attention["dropout_seed"] = s.dropoutSeed;
    root["attention"] = std::move(attention);
    OrderedJson mask;
    mask["causal"] = s.mask.causal;
    mask["window"] = s.mask.window;
    mask["causal_window"] = s.mask.causalWindow;
    mask["valid_len"] = s.mask.validLen;
    mask["custom"] = s.mask.custom ? customToJson(*s.mask.custom) : OrderedJson(nullptr);
    root["mask"] = std::move(mask);
    const ViewState& v = s.viewState;
    OrderedJson view = {{"view", v.view},
                        {"colormap", v.colormap},
                        {"theme", v.theme},
                        {"show", v.show},
                        {"head", v.head},
                        {"query", v.query},
                        {"cell_values", v.cellValues},
                        {"color_scale", v.colorScale}};
    // The chosen range belongs to its scale: a file on any other scale has none.
    if (v.colorScale == "range")
        view["color_range"] = OrderedJson::array({v.colorLow, v.colorHigh});
    view["flash_step"] = v.flashStep;
    view["kv_step"] = v.kvStep;
    root["view"] = std::move(view);
    return compactNumberArrays(root.dump(2)) + "\n";
}

Result<Session> sessionFromJson(const std::string& text) {
    if (text.size() > Session::kMaxFileBytes)
        return Error{"the file is " + std::to_string(text.size()) +
                     " bytes; a session is at most " + std::to_string(Session::kMaxFileBytes)};
    auto parsed = parseJson(text);
    if (!parsed) return Error{parsed.error()};
    const Json root = std::move(*parsed);
    if (!root.is_object()) return Error{"a session is a JSON object, got " + typeOf(root)};

    Session s;
    try {
        // Every key is optional, the version too ({} is the default session); a lesson is
        // named as what it is.
        const auto version = root.find("attnlab_session");
        if (version == root.end() && root.contains("steps"))
            return Error{"a lesson, not a session: open it with --lesson or File > Lessons > "
                         "Open Lesson"};
        const Index number = version == root.end()
                                 ? Session::kVersion
                                 : Section::wholeNumber(*version, "attnlab_session");
        if (number > Session::kVersion)
            return Error{"attnlab_session: the file is format version " + std::to_string(number) +
                         ", newer than this AttnLab reads (" + std::to_string(Session::kVersion) +
                         "); update AttnLab"};
        if (number < 1)
            return Error{"attnlab_session: unknown format version " + std::to_string(number)};

        for (const KnownKeys& section : knownKeys()) {
            if (!*section.section) {
                refuseUnknownKeys(root, section);
                continue;
            }
            const auto part = root.find(section.section);
            if (part != root.end() && part->is_object()) refuseUnknownKeys(*part, section);
        }

        Section top(&root, "session");
        if (const Json* title = top.find("title")) {
            if (!title->is_string()) fail("title", "expected a string, got " + typeOf(*title));
            s.title = title->get<std::string>();
        }

        const Section tokens = Section::child(root, "tokens");
        tokens.get("text", s.text);
        tokens.get("source", s.sourceText);
        // Bounded here, before anything tokenizes it (a character-tokenized 30 MB text would
        // take ~1 GB as tokens before the token count could be checked).
        for (const char* key : {"text", "source"}) {
            const std::string& value = key[0] == 't' ? s.text : s.sourceText;
            if (value.size() > Session::kMaxTextBytes)
                fail(tokens.path(key), "the text is " + std::to_string(value.size()) +
                                           " bytes long; at most " +
                                           std::to_string(Session::kMaxTextBytes) + " are allowed");
        }
        getEnum(tokens, "tokenizer", s.tokenizer, parseTokenizer, "whitespace or character");

        const Section model = Section::child(root, "model");
        model.get("d_model", s.dModel);
        model.get("heads", s.heads);
        model.get("kv_heads", s.kvHeads);
        getEnum(model, "positional", s.positional, parsePositional,
                "none, sinusoidal, rope-interleaved or rope-half");
        model.get("rope_base", s.ropeBase);
        model.get("seed", s.seed);
        model.get("identity_projections", s.identityProjections);

        const Section attention = Section::child(root, "attention");
        getEnum(attention, "variant", s.variant, parseVariant,
                "softmax, flash, linear or additive");
        attention.get("scale", s.scale, -Session::kMaxScale, Session::kMaxScale, "the scale");
        if (s.scale && *s.scale != 0 && std::abs(*s.scale) < Session::kMinScale) {
            std::ostringstream out;
            out << *s.scale << " is out of range: the scale must be 0 or at least "
                << Session::kMinScale << " in magnitude";
            fail(attention.path("scale"), out.str());
        }
        attention.get("temperature", s.temperature, Session::kMinTemperature,
                      Session::kMaxTemperature, "the temperature");
        attention.get("q_block", s.qBlock);
        attention.get("kv_block", s.kvBlock);
        attention.get("kv_prefill", s.kvPrefill);
        if (attention.find("mode")) {
            std::string mode;
            attention.get("mode", mode);
            if (mode != "train" && mode != "eval")
                fail(attention.path("mode"),
                     "unknown value \"" + mode + "\" (expected train or eval)");
            s.train = mode == "train";
        }
        attention.get("dropout", s.dropoutRate);
        if (attention.find("dropout") && !(s.dropoutRate >= 0 && s.dropoutRate < 1)) {
            std::ostringstream out;
            out << s.dropoutRate
                << " is out of range: the dropout rate must be at least 0 and less than 1";
            fail(attention.path("dropout"), out.str());
        }
        attention.get("dropout_seed", s.dropoutSeed);

        const Section mask = Section::child(root, "mask");
        mask.get("causal", s.mask.causal);
        mask.get("window", s.mask.window);
        mask.get("causal_window", s.mask.causalWindow);
        if (const Json* lens = mask.find("valid_len")) {
            if (lens->is_null())
                s.mask.validLen.clear();
            else if (lens->is_number())
                s.mask.validLen = {Section::wholeNumber(*lens, "mask.valid_len")};
            else if (lens->is_array()) {
                s.mask.validLen.clear();
                for (const Json& len : *lens)
                    s.mask.validLen.push_back(Section::wholeNumber(len, "mask.valid_len"));
            } else {
                fail("mask.valid_len", "expected a list of whole numbers, got " + typeOf(*lens));
            }
        }
        if (const Json* custom = mask.find("custom")) {
            if (custom->is_null())
                s.mask.custom.reset();
            else
                s.mask.custom = customFromJson(*custom, "mask.custom");
        }

        const Section view = Section::child(root, "view");
        ViewState& v = s.viewState;
        view.get("view", v.view);
        view.get("colormap", v.colormap);
        view.get("theme", v.theme);
        view.get("show", v.show);
        view.get("head", v.head);
        view.get("query", v.query);
        view.get("cell_values", v.cellValues);
        getEnum(
            view, "color_scale", v.colorScale,
            [](const std::string& name) -> std::optional<std::string> {
                if (isColorScale(name)) return name;
                return std::nullopt;
            },
            "fixed, data, row, log or range");
        if (const Json* range = view.find("color_range")) {
            const std::string where = view.path("color_range");
            if (!range->is_array())
                fail(where, "expected a list of two numbers [low, high], got " + typeOf(*range));
            if (range->size() != 2)
                fail(where, "expected two numbers [low, high], got a list of " +
                                std::to_string(range->size()));
            for (const Json& end : *range)
                if (!end.is_number())
                    fail(where,
                         "expected two numbers [low, high], got " + typeOf(end) + " in the list");
            v.colorLow = (*range)[0].get<double>();
            v.colorHigh = (*range)[1].get<double>();
            if (const auto problem = colorRangeProblem(v.colorLow, v.colorHigh))
                fail(where, problem->message);
        } else if (v.colorScale == "range") {
            fail(view.path("color_scale"),
                 "\"range\" needs the range as view.color_range: [low, high]");
        }
        view.get("flash_step", v.flashStep);
        view.get("kv_step", v.kvStep);
    } catch (const JsonProblem& problem) {
        return Error{problem.message};
    }
    return s;
}

Result<Session> loadSession(const std::string& path) {
    auto text = readFile(path, Session::kMaxFileBytes);
    if (!text) return Error{text.error()};
    auto session = sessionFromJson(*text);
    if (!session) return Error{path + ": " + session.error()};
    return session;
}

Status saveSession(const std::string& path, const Session& session) {
    return writeFileAtomic(path, sessionToJson(session));
}

} // namespace attnlab
