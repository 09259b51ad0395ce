// PyTorch zip checkpoints read without running anything: a restricted pickle reader (the
// subset torch.load(weights_only=True) accepts for a state dict), then the storages, each
// checked against its file before it is read.

#include "attnlab/model/torch_checkpoint.h"

#include <sys/stat.h>
#include <zip.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string_view>

#include "attnlab/io/json_read.h"
#include "attnlab/io/zip_archive.h"

namespace attnlab::model {
namespace {

static_assert(std::endian::native == std::endian::little,
              "PyTorch storages are read in place as little-endian");

// ---- the pickle ----------------------------------------------------------------------------

/// Every pickle opcode by name (protocols 0-5), for messages about the ones refused.
const char* opcodeName(unsigned char op) {
    switch (op) {
    case '(':
        return "MARK";
    case '.':
        return "STOP";
    case '0':
        return "POP";
    case '2':
        return "DUP";
    case '1':
        return "POP_MARK";
    case 'F':
        return "FLOAT";
    case 'I':
        return "INT";
    case 'J':
        return "BININT";
    case 'K':
        return "BININT1";
    case 'L':
        return "LONG";
    case 'M':
        return "BININT2";
    case 'N':
        return "NONE";
    case 'P':
        return "PERSID";
    case 'Q':
        return "BINPERSID";
    case 'R':
        return "REDUCE";
    case 'S':
        return "STRING";
    case 'T':
        return "BINSTRING";
    case 'U':
        return "SHORT_BINSTRING";
    case 'V':
        return "UNICODE";
    case 'X':
        return "BINUNICODE";
    case 'a':
        return "APPEND";
    case 'b':
        return "BUILD";
    case 'c':
        return "GLOBAL";
    case 'd':
        return "DICT";
    case '}':
        return "EMPTY_DICT";
    case 'e':
        return "APPENDS";
    case 'g':
        return "GET";
    case 'h':
        return "BINGET";
    case 'i':
        return "INST";
    case 'j':
        return "LONG_BINGET";
    case 'l':
        return "LIST";
    case ']':
        return "EMPTY_LIST";
    case 'o':
        return "OBJ";
    case 'p':
        return "PUT";
    case 'q':
        return "BINPUT";
    case 'r':
        return "LONG_BINPUT";
    case 's':
        return "SETITEM";
    case 't':
        return "TUPLE";
    case ')':
        return "EMPTY_TUPLE";
    case 'u':
        return "SETITEMS";
    case 'G':
        return "BINFLOAT";
    case 0x80:
        return "PROTO";
    case 0x81:
        return "NEWOBJ";
    case 0x82:
        return "EXT1";
    case 0x83:
        return "EXT2";
    case 0x84:
        return "EXT4";
    case 0x85:
        return "TUPLE1";
    case 0x86:
        return "TUPLE2";
    case 0x87:
        return "TUPLE3";
    case 0x88:
        return "NEWTRUE";
    case 0x89:
        return "NEWFALSE";
    case 0x8a:
        return "LONG1";
    case 0x8b:
        return "LONG4";
    case 'B':
        return "BINBYTES";
    case 'C':
        return "SHORT_BINBYTES";
    case 0x8c:
        return "SHORT_BINUNICODE";
    case 0x8d:
        return "BINUNICODE8";
    case 0x8e:
        return "BINBYTES8";
    case 0x8f:
        return "EMPTY_SET";
    case 0x90:
        return "ADDITEMS";
    case 0x91:
        return "FROZENSET";
    case 0x92:
        return "NEWOBJ_EX";
    case 0x93:
        return "STACK_GLOBAL";
    case 0x94:
        return "MEMOIZE";
    case 0x95:
        return "FRAME";
    case 0x96:
        return "BYTEARRAY8";
    case 0x97:
        return "NEXT_BUFFER";
    case 0x98:
        return "READONLY_BUFFER";
    default:
        return nullptr;
    }
}

std::string hexByte(unsigned char op) {
    static const char digits[] = "0123456789abcdef";
    return std::string("0x") + digits[op >> 4] + digits[op & 15];
}

/// The storage types a persistent id may name, and the dtype of their elements.
std::optional<TensorDType> storageDType(std::string_view global) {
    static const std::map<std::string_view, TensorDType> types = {
        {"torch.FloatStorage", TensorDType::F32},     {"torch.HalfStorage", TensorDType::F16},
        {"torch.BFloat16Storage", TensorDType::BF16}, {"torch.DoubleStorage", TensorDType::F64},
        {"torch.LongStorage", TensorDType::I64},      {"torch.IntStorage", TensorDType::I32},
        {"torch.ShortStorage", TensorDType::I16},     {"torch.CharStorage", TensorDType::I8},
        {"torch.ByteStorage", TensorDType::U8},       {"torch.BoolStorage", TensorDType::Bool},
    };
    const auto it = types.find(global);
    if (it == types.end()) return std::nullopt;
    return it->second;
}

/// PyTorch's own limit on a tensor's dimensions.
constexpr std::size_t kMaxDimensions = 64;

constexpr std::string_view kRebuildTensor = "torch._utils._rebuild_tensor_v2";
constexpr std::string_view kRebuildParameter = "torch._utils._rebuild_parameter";
constexpr std::string_view kOrderedDict = "collections.OrderedDict";

/// A value on the pickle machine's stack. Values live in one arena and refer to each other by
/// index, so a pickle that puts a list inside itself makes no ownership cycle.
struct Value {
    enum class Kind {
        None,
        Bool,
        Int,
        Float,
        Text,
        Tuple,
        List,
        Dict,
        Set,
        Global,
        Storage,
        Tensor
    };
    Kind kind = Kind::None;
    std::int64_t integer = 0;
    std::string text;                     ///< Text; Global: "module.name"; Storage: its key
    std::vector<std::size_t> items;       ///< Tuple, List, Set; Dict: key, value, key, value...
    std::size_t tensor = 0;               ///< Tensor: index into the reader's records
    TensorDType dtype = TensorDType::F32; ///< Storage: its elements' type
    std::uint64_t elements = 0;           ///< Storage: its length
};

Value valueOf(Value::Kind kind) {
    Value v;
    v.kind = kind;
    return v;
}

struct PickleError {
    std::string message;
};

class PickleReader {
public:
    PickleReader(const unsigned char* bytes, std::size_t size, std::string name,
                 std::size_t start = 0)
        : m_bytes(bytes), m_size(size), m_name(std::move(name)), m_at(start) {}

    /// The state dict's tensors (the pickle must hold a dict).
    std::vector<TorchTensorRecord> read() { return finish(readValue()); }

    /// Where the pickle read last ended: the byte after its STOP.
    std::size_t position() const { return m_at; }

    /// The legacy format's small pickles, read one after the other: an integer, a dict's
    /// boolean, a list of strings.
    std::int64_t readInteger(const char* what) { return integer(readValue(), what); }
    std::optional<bool> readDictFlag(const std::string& key) {
        const Value& dict = m_values[readValue()];
        if (dict.kind != Value::Kind::Dict) fail("the format's description is not a dict");
        for (std::size_t i = 0; i + 1 < dict.items.size(); i += 2)
            if (m_values[dict.items[i]].kind == Value::Kind::Text &&
                m_values[dict.items[i]].text == key &&
                m_values[dict.items[i + 1]].kind == Value::Kind::Bool)
                return m_values[dict.items[i + 1]].integer != 0;
        return std::nullopt;
    }
    std::vector<std::string> readStrings(const char* what) {
        const Value& list = m_values[readValue()];
        if (list.kind != Value::Kind::List) fail(std::string(what) + " is not a list");
        std::vector<std::string> out;
        for (std::size_t item : list.items) {
            if (m_values[item].kind != Value::Kind::Text)
                fail(std::string(what) + " holds something that is not a string");
            out.push_back(m_values[item].text);
        }
        return out;
    }

private:
    /// Runs the machine from the current position to STOP; the value left on the stack.
    std::size_t readValue() {
        m_stack.clear();
        m_marks.clear();
        m_memo.clear(); // each pickle of a file has its own memo
        while (true) {
            if (m_at >= m_size) fail("truncated: the pickle ends before its STOP opcode");
            m_op = m_at;
            const unsigned char op = m_bytes[m_at++];
            switch (op) {
            case 0x80: // PROTO
                if (const unsigned protocol = take(1)[0]; protocol > 5)
                    fail("pickle protocol " + std::to_string(protocol) + " is not one there is");
                break;
            case '.': // STOP
                if (m_stack.empty()) fail("STOP on an empty stack");
                return m_stack.back();
            case '(': // MARK
                m_marks.push_back(m_stack.size());
                break;
            case 'N':
                push(make(Value::Kind::None));
                break;
            case 0x88:   // NEWTRUE
            case 0x89: { // NEWFALSE
                Value v = valueOf(Value::Kind::Bool);
                v.integer = op == 0x88;
                push(add(std::move(v)));
                break;
            }
            case 'J': { // BININT: signed 32-bit
                const auto* b = take(4);
                std::uint32_t u = 0;
                std::memcpy(&u, b, 4);
                pushInt(static_cast<std::int32_t>(u));
                break;
            }
            case 'K': // BININT1
                pushInt(take(1)[0]);
                break;
            case 'M': { // BININT2: unsigned 16-bit
                const auto* b = take(2);
                pushInt(b[0] | (b[1] << 8));
                break;
            }
            case 0x8a: { // LONG1: little-endian two's complement of n bytes
                const unsigned n = take(1)[0];
                const auto* b = take(n);
                if (n > 8) fail("LONG1 of " + std::to_string(n) + " bytes: too large for a size");
                std::uint64_t u = 0;
                for (unsigned i = 0; i < n; ++i)
                    u |= std::uint64_t(b[i]) << (8 * i);
                if (n > 0 && n < 8 && (b[n - 1] & 0x80)) u |= ~std::uint64_t(0) << (8 * n);
                pushInt(static_cast<std::int64_t>(u));
                break;
            }
            case 'G': { // BINFLOAT: big-endian double
                take(8);
                push(make(Value::Kind::Float));
                break;
            }
            case 'X': { // BINUNICODE
                const auto* b = take(4);
                std::uint32_t length = 0;
                std::memcpy(&length, b, 4);
                pushText(take(length), length);
                break;
            }
            case 'U': { // SHORT_BINSTRING
                const unsigned length = take(1)[0];
                pushText(take(length), length);
                break;
            }
            case ')':
                push(make(Value::Kind::Tuple));
                break;
            case ']':
                push(make(Value::Kind::List));
                break;
            case '}':
                push(make(Value::Kind::Dict));
                break;
            case 0x8f: // EMPTY_SET
                push(make(Value::Kind::Set));
                break;
            case 't': { // TUPLE
                Value v = valueOf(Value::Kind::Tuple);
                v.items = popMark();
                push(add(std::move(v)));
                break;
            }
            case 0x85:
            case 0x86:
            case 0x87: { // TUPLE1..3
                const std::size_t n = op - 0x84u;
                need(n);
                Value v = valueOf(Value::Kind::Tuple);
                v.items.assign(m_stack.end() - static_cast<std::ptrdiff_t>(n), m_stack.end());
                m_stack.resize(m_stack.size() - n);
                push(add(std::move(v)));
                break;
            }
            case 'a': { // APPEND
                need(2);
                const std::size_t item = pop();
                listAt(top(), "APPEND").items.push_back(item);
                break;
            }
            case 'e': { // APPENDS
                auto items = popMark();
                need(1);
                auto& list = listAt(top(), "APPENDS").items;
                list.insert(list.end(), items.begin(), items.end());
                break;
            }
            case 's': { // SETITEM
                need(3);
                const std::size_t value = pop();
                const std::size_t key = pop();
                auto& dict = dictAt(top(), "SETITEM").items;
                dict.push_back(key);
                dict.push_back(value);
                break;
            }
            case 'u': { // SETITEMS
                auto items = popMark();
                need(1);
                if (items.size() % 2 != 0) fail("SETITEMS with a key and no value");
                auto& dict = dictAt(top(), "SETITEMS").items;
                dict.insert(dict.end(), items.begin(), items.end());
                break;
            }
            case 'q': // BINPUT
                put(take(1)[0]);
                break;
            case 'r': { // LONG_BINPUT
                std::uint32_t index = 0;
                std::memcpy(&index, take(4), 4);
                put(index);
                break;
            }
            case 'h': // BINGET
                get(take(1)[0]);
                break;
            case 'j': { // LONG_BINGET
                std::uint32_t index = 0;
                std::memcpy(&index, take(4), 4);
                get(index);
                break;
            }
            case 'c': // GLOBAL
                global();
                break;
            case 'R': // REDUCE
                reduce();
                break;
            case 'b': { // BUILD: the state of an OrderedDict (its _metadata) or a tensor, unused
                need(2);
                pop();
                const Value::Kind kind = m_values[top()].kind;
                if (kind != Value::Kind::Dict && kind != Value::Kind::Tensor)
                    fail("BUILD of a " + kindName(kind) +
                         ": only a tensor or an OrderedDict is built");
                break;
            }
            case 'Q': // BINPERSID
                persistentId();
                break;
            default: {
                const char* known = opcodeName(op);
                fail(std::string("opcode ") + (known ? known : "unknown") + " (" + hexByte(op) +
                     ") is not accepted: a state dict saved by torch.save needs only the "
                     "opcodes torch.load(weights_only=True) reads");
            }
            }
        }
    }

    [[noreturn]] void fail(const std::string& what) const {
        throw PickleError{m_name + ": " + what + " (at byte " + std::to_string(m_op) + ")"};
    }

    const unsigned char* take(std::size_t n) {
        if (n > m_size - m_at)
            fail(std::string("truncated: ") +
                 (opcodeName(m_bytes[m_op]) ? opcodeName(m_bytes[m_op]) : "an opcode") + " needs " +
                 std::to_string(n) + " bytes, " + std::to_string(m_size - m_at) + " are left");
        const unsigned char* at = m_bytes + m_at;
        m_at += n;
        return at;
    }

    std::size_t add(Value v) {
        m_values.push_back(std::move(v));
        return m_values.size() - 1;
    }
    std::size_t make(Value::Kind kind) { return add(valueOf(kind)); }
    void push(std::size_t v) { m_stack.push_back(v); }
    void pushInt(std::int64_t i) {
        Value v = valueOf(Value::Kind::Int);
        v.integer = i;
        push(add(std::move(v)));
    }
    void pushText(const unsigned char* b, std::size_t n) {
        Value v = valueOf(Value::Kind::Text);
        v.text.assign(reinterpret_cast<const char*>(b), n);
        push(add(std::move(v)));
    }

    /// At least n values above the last MARK.
    void need(std::size_t n) const {
        const std::size_t floor = m_marks.empty() ? 0 : m_marks.back();
        if (m_stack.size() - floor < n)
            fail(std::string(opcodeName(m_bytes[m_op])) + " on a stack with too few values");
    }
    std::size_t pop() {
        const std::size_t v = m_stack.back();
        m_stack.pop_back();
        return v;
    }
    std::size_t top() const { return m_stack.back(); }
    std::vector<std::size_t> popMark() {
        if (m_marks.empty()) fail(std::string(opcodeName(m_bytes[m_op])) + " without a MARK");
        const std::size_t mark = m_marks.back();
        m_marks.pop_back();
        std::vector<std::size_t> items(m_stack.begin() + static_cast<std::ptrdiff_t>(mark),
                                       m_stack.end());
        m_stack.resize(mark);
        return items;
    }
    void put(std::uint32_t index) {
        need(1);
        m_memo[index] = top();
    }
    void get(std::uint32_t index) {
        const auto it = m_memo.find(index);
        if (it == m_memo.end()) fail("GET of memo " + std::to_string(index) + ", never PUT");
        push(it->second);
    }

    static std::string kindName(Value::Kind kind) {
        switch (kind) {
        case Value::Kind::None:
            return "None";
        case Value::Kind::Bool:
            return "bool";
        case Value::Kind::Int:
            return "int";
        case Value::Kind::Float:
            return "float";
        case Value::Kind::Text:
            return "string";
        case Value::Kind::Tuple:
            return "tuple";
        case Value::Kind::List:
            return "list";
        case Value::Kind::Dict:
            return "dict";
        case Value::Kind::Set:
            return "set";
        case Value::Kind::Global:
            return "global";
        case Value::Kind::Storage:
            return "storage";
        case Value::Kind::Tensor:
            return "tensor";
        }
        return "value";
    }
    Value& listAt(std::size_t v, const char* op) {
        if (m_values[v].kind != Value::Kind::List)
            fail(std::string(op) + " to a " + kindName(m_values[v].kind) + ", not a list");
        return m_values[v];
    }
    Value& dictAt(std::size_t v, const char* op) {
        if (m_values[v].kind != Value::Kind::Dict)
            fail(std::string(op) + " on a " + kindName(m_values[v].kind) + ", not a dict");
        return m_values[v];
    }

    /// A line of GLOBAL's operand: up to '\n', which must be there.
    std::string line() {
        const auto* begin = m_bytes + m_at;
        const auto* end =
            static_cast<const unsigned char*>(std::memchr(begin, '\n', m_size - m_at));
        if (!end) fail("truncated: GLOBAL's name has no end of line");
        m_at += static_cast<std::size_t>(end - begin) + 1;
        return std::string(reinterpret_cast<const char*>(begin),
                           static_cast<std::size_t>(end - begin));
    }

    void global() {
        const std::string module = line();
        const std::string name = line();
        const std::string full = module + "." + name;
        const bool allowed = full == kRebuildTensor || full == kRebuildParameter ||
                             full == kOrderedDict || storageDType(full).has_value();
        if (!allowed) {
            std::string shown = full.substr(0, 120);
            for (char& c : shown)
                if (!std::isprint(static_cast<unsigned char>(c))) c = '?';
            fail("GLOBAL " + shown +
                 " is not allowed: a state dict names only torch._utils._rebuild_tensor_v2, "
                 "torch._utils._rebuild_parameter, collections.OrderedDict and torch.*Storage "
                 "types; nothing in the file is run");
        }
        Value v = valueOf(Value::Kind::Global);
        v.text = full;
        push(add(std::move(v)));
    }

    std::int64_t integer(std::size_t v, const char* what) const {
        if (m_values[v].kind != Value::Kind::Int) fail(std::string(what) + " is not an integer");
        return m_values[v].integer;
    }
    std::vector<std::int64_t> integers(std::size_t v, const char* what) const {
        if (m_values[v].kind != Value::Kind::Tuple)
            fail(std::string(what) + " is not a tuple of integers");
        if (m_values[v].items.size() > kMaxDimensions)
            fail(std::string(what) + " has " + std::to_string(m_values[v].items.size()) +
                 " dimensions, more than a tensor has (" + std::to_string(kMaxDimensions) + ")");
        std::vector<std::int64_t> out;
        for (std::size_t item : m_values[v].items)
            out.push_back(integer(item, what));
        return out;
    }

    void reduce() {
        need(2);
        const std::size_t argsIndex = pop();
        if (m_values[top()].kind != Value::Kind::Global)
            fail("REDUCE of a " + kindName(m_values[top()].kind) +
                 ": only the tensor rebuilds and collections.OrderedDict are called");
        // A copy: the arena grows below, which moves its values.
        const std::string function = m_values[top()].text;
        if (m_values[argsIndex].kind != Value::Kind::Tuple)
            fail("REDUCE of " + function + " with arguments that are not a tuple");
        const std::vector<std::size_t> args = m_values[argsIndex].items;
        std::size_t result = 0;
        if (function == kOrderedDict) {
            if (!args.empty()) fail("collections.OrderedDict called with arguments");
            result = make(Value::Kind::Dict);
        } else if (function == kRebuildTensor) {
            // (storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
            if (args.size() != 6 && args.size() != 7)
                fail("torch._utils._rebuild_tensor_v2 with " + std::to_string(args.size()) +
                     " arguments, not 6 or 7");
            const Value storage = m_values[args[0]];
            if (storage.kind != Value::Kind::Storage)
                fail("torch._utils._rebuild_tensor_v2 of a " + kindName(storage.kind) +
                     ", not a storage");
            TorchTensorRecord record;
            record.storageKey = storage.text;
            record.dtype = storage.dtype;
            record.storageElements = storage.elements;
            const std::int64_t offset = integer(args[1], "the storage offset");
            if (offset < 0) fail("a negative storage offset");
            record.offset = static_cast<std::uint64_t>(offset);
            record.shape = integers(args[2], "the size");
            record.strides = integers(args[3], "the stride");
            if (record.shape.size() != record.strides.size())
                fail("a tensor of " + std::to_string(record.shape.size()) + " dimensions with " +
                     std::to_string(record.strides.size()) + " strides");
            Value v = valueOf(Value::Kind::Tensor);
            v.tensor = m_records.size();
            m_records.push_back(std::move(record));
            result = add(std::move(v));
        } else if (function == kRebuildParameter) {
            // (data, requires_grad, backward_hooks): the tensor itself.
            if (args.size() != 3 || m_values[args[0]].kind != Value::Kind::Tensor)
                fail("torch._utils._rebuild_parameter without a tensor and two arguments");
            result = args[0];
        } else {
            fail("REDUCE of " + function +
                 " is not allowed: only torch._utils._rebuild_tensor_v2, "
                 "torch._utils._rebuild_parameter and collections.OrderedDict are called");
        }
        m_stack.back() = result;
    }

    void persistentId() {
        need(1);
        const Value& pid = m_values[pop()];
        // ('storage', TYPE, KEY, LOCATION, NUMEL), or the legacy format's
        // ('storage', TYPE, KEY, LOCATION, NUMEL, VIEW_METADATA) with no view.
        if (pid.kind == Value::Kind::Tuple && pid.items.size() == 6 &&
            m_values[pid.items[5]].kind != Value::Kind::None)
            fail("a storage view (the legacy format's view_metadata), which AttnLab does not read");
        if (pid.kind != Value::Kind::Tuple || (pid.items.size() != 5 && pid.items.size() != 6) ||
            m_values[pid.items[0]].kind != Value::Kind::Text ||
            m_values[pid.items[0]].text != "storage")
            fail("a persistent id that is not ('storage', type, key, location, numel): only "
                 "storages are loaded");
        const Value& type = m_values[pid.items[1]];
        const Value& key = m_values[pid.items[2]];
        const Value& location = m_values[pid.items[3]];
        if (type.kind != Value::Kind::Global || !storageDType(type.text))
            fail("a storage whose type is not a torch.*Storage");
        if (key.kind != Value::Kind::Text || key.text.empty() || key.text.size() > 64 ||
            !std::all_of(key.text.begin(), key.text.end(), [](char c) {
                return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
            }))
            fail("a storage key that is not a file name of letters and digits");
        if (location.kind != Value::Kind::Text) fail("a storage location that is not a string");
        const std::int64_t numel = integer(pid.items[4], "the storage's length");
        if (numel < 0 || static_cast<std::uint64_t>(numel) >= (std::uint64_t(1) << 56))
            fail("a storage of " + std::to_string(numel) + " elements");
        Value v = valueOf(Value::Kind::Storage);
        v.text = key.text;
        v.dtype = *storageDType(type.text);
        v.elements = static_cast<std::uint64_t>(numel);
        push(add(std::move(v)));
    }

    std::vector<TorchTensorRecord> finish(std::size_t rootIndex) {
        const Value& root = m_values[rootIndex];
        if (root.kind != Value::Kind::Dict)
            fail("the pickle holds a " + kindName(root.kind) + ", not a state dict");
        std::vector<TorchTensorRecord> out;
        std::set<std::string> names;
        for (std::size_t i = 0; i + 1 < root.items.size(); i += 2) {
            const Value& key = m_values[root.items[i]];
            const Value& value = m_values[root.items[i + 1]];
            if (value.kind != Value::Kind::Tensor) continue;
            if (key.kind != Value::Kind::Text) fail("a state dict key that is not a string");
            if (key.text.empty()) fail("a state dict key that is empty: a tensor needs a name");
            if (!names.insert(key.text).second) fail("tensor '" + key.text + "' appears twice");
            TorchTensorRecord record = m_records[value.tensor];
            record.name = key.text;
            out.push_back(std::move(record));
        }
        if (out.empty()) fail("the state dict holds no tensor");
        return out;
    }

    const unsigned char* m_bytes;
    std::size_t m_size;
    std::string m_name;
    std::size_t m_at = 0;
    std::size_t m_op = 0;
    std::vector<Value> m_values;
    std::vector<std::size_t> m_stack;
    std::vector<std::size_t> m_marks;
    std::map<std::uint32_t, std::size_t> m_memo;
    std::vector<TorchTensorRecord> m_records;
};

// ---- the zip archive -----------------------------------------------------------------------

using ZipArchive = zip::Archive;
using ZipFile = zip::File;
using zip::kMaxDeflateRatio; // torch.save stores its members uncompressed

struct Member {
    zip_uint64_t index = 0;
    zip_uint64_t size = 0;
};

class TorchArchive {
public:
    static Result<TorchArchive> open(const std::string& path) {
        TorchArchive archive;
        archive.m_path = path;
        struct stat info {};
        if (::stat(path.c_str(), &info) != 0)
            return Error{path + ": cannot open: " + std::strerror(errno)};
        archive.m_bytes = static_cast<zip_uint64_t>(info.st_size);
        // A zip, from its first bytes (readCheckpoint sends the legacy format elsewhere).
        unsigned char magic[4] = {0, 0, 0, 0};
        {
            std::ifstream in(path, std::ios::binary);
            in.read(reinterpret_cast<char*>(magic), 4);
        }
        if (archive.m_bytes < 4 || std::memcmp(magic, "PK\x03\x04", 4) != 0)
            return Error{path + ": not a PyTorch checkpoint (a zip archive holding data.pkl)"};
        int code = 0;
        archive.m_zip.reset(zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code));
        if (!archive.m_zip) {
            zip_error_t error;
            zip_error_init_with_code(&error, code);
            const char* text = zip_error_strerror(&error);
            const std::string message = text ? text : "unknown zip error";
            zip_error_fini(&error);
            return Error{path + ": not a valid PyTorch checkpoint (zip archive): " + message};
        }
        const zip_int64_t count = zip_get_num_entries(archive.m_zip.get(), 0);
        for (zip_int64_t i = 0; i < count; ++i) {
            zip_stat_t stat;
            zip_stat_init(&stat);
            constexpr zip_uint64_t kNeeded =
                ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
            if (zip_stat_index(archive.m_zip.get(), static_cast<zip_uint64_t>(i), 0, &stat) != 0 ||
                (stat.valid & kNeeded) != kNeeded)
                return Error{path + ": corrupt archive entry " + std::to_string(i)};
            const std::string name = stat.name;
            // The sizes the archive claims, checked against the archive before anything is read.
            if (stat.comp_size > archive.m_bytes)
                return Error{path + "[" + name + "]: the member claims " +
                             std::to_string(stat.comp_size) + " bytes but the archive has " +
                             std::to_string(archive.m_bytes)};
            if (stat.comp_method == ZIP_CM_STORE) {
                if (stat.size != stat.comp_size)
                    return Error{path + "[" + name + "]: a stored member of " +
                                 std::to_string(stat.comp_size) + " bytes claims to hold " +
                                 std::to_string(stat.size)};
            } else if (stat.comp_method == ZIP_CM_DEFLATE) {
                if (stat.size / kMaxDeflateRatio > stat.comp_size)
                    return Error{path + "[" + name +
                                 "]: the member claims more bytes than "
                                 "deflate can expand to"};
            } else {
                return Error{path + "[" + name + "]: compression method " +
                             std::to_string(stat.comp_method) +
                             " is not supported (torch.save stores its members uncompressed)"};
            }
            archive.m_members[name] = Member{static_cast<zip_uint64_t>(i), stat.size};
            const auto slash = name.find('/');
            if (slash != std::string::npos &&
                name.compare(slash, std::string::npos, "/data.pkl") == 0) {
                if (!archive.m_prefix.empty())
                    return Error{path + ": two data.pkl records (" + archive.m_prefix +
                                 "/data.pkl and " + name + ")"};
                archive.m_prefix = name.substr(0, slash);
            }
        }
        if (archive.m_prefix.empty())
            return Error{path +
                         ": a zip archive without PREFIX/data.pkl: not a PyTorch checkpoint"};
        if (const Member* order = archive.find(archive.m_prefix + "/byteorder")) {
            auto bytes = archive.read(*order, archive.m_prefix + "/byteorder");
            if (!bytes) return Error{bytes.error()};
            const std::string text(bytes->begin(), bytes->end());
            if (text != "little")
                return Error{path + ": storages in byte order '" + text.substr(0, 16) +
                             "'; AttnLab reads little-endian ones"};
        }
        return archive;
    }

    const std::string& prefix() const { return m_prefix; }
    const Member* find(const std::string& name) const {
        const auto it = m_members.find(name);
        return it == m_members.end() ? nullptr : &it->second;
    }

    /// A member's bytes, read whole (libzip checks its CRC).
    Result<std::vector<unsigned char>> read(const Member& member, const std::string& name) const {
        const std::string label = m_path + "[" + name + "]";
        ZipFile file(zip_fopen_index(m_zip.get(), member.index, 0));
        if (!file) return Error{label + ": cannot open the member: " + zip_strerror(m_zip.get())};
        std::vector<unsigned char> bytes;
        constexpr std::size_t kChunk = std::size_t(1) << 22;
        // Memory grows with the bytes actually read, never with a claim alone.
        while (bytes.size() < member.size) {
            const std::size_t old = bytes.size();
            const auto chunk =
                static_cast<std::size_t>(std::min<zip_uint64_t>(member.size - old, kChunk));
            bytes.resize(old + chunk);
            const zip_int64_t got = zip_fread(file.get(), bytes.data() + old, chunk);
            if (got < 0) return Error{label + ": corrupt member: " + zip_file_strerror(file.get())};
            bytes.resize(old + static_cast<std::size_t>(got));
            if (got == 0) break;
        }
        if (bytes.size() != member.size)
            return Error{label + ": truncated member (" + std::to_string(bytes.size()) + " of " +
                         std::to_string(member.size) + " bytes)"};
        unsigned char extra;
        if (zip_fread(file.get(), &extra, 1) != 0)
            return Error{label + ": corrupt member: " + zip_file_strerror(file.get())};
        return bytes;
    }

private:
    std::string m_path;
    zip_uint64_t m_bytes = 0;
    ZipArchive m_zip;
    std::map<std::string, Member> m_members;
    std::string m_prefix;
};

/// a * b, or nullopt when it overflows 64 bits.
std::optional<std::uint64_t> times(std::uint64_t a, std::uint64_t b) {
    std::uint64_t out = 0;
    if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
    return out;
}

/// Every view checked against its storage's length (offset, shape, strides, overflow
/// included), and the index's names against the file's, before any storage is read.
Status checkViews(const std::string& path, const std::vector<TorchTensorRecord>& records,
                  const std::set<std::string>* wanted) {
    std::map<std::string, std::pair<TensorDType, std::uint64_t>> storages;
    for (const auto& r : records) {
        if (wanted && !wanted->count(r.name)) continue;
        const std::string where = path + ": tensor '" + r.name + "'";
        auto [it, fresh] = storages.try_emplace(r.storageKey, r.dtype, r.storageElements);
        if (!fresh && (it->second.first != r.dtype || it->second.second != r.storageElements))
            return Error{where + ": storage " + r.storageKey +
                         " is named with two types or lengths"};
        std::uint64_t count = 1;
        std::uint64_t last = r.offset; // the last element the view reads
        for (std::size_t d = 0; d < r.shape.size(); ++d) {
            if (r.shape[d] < 0 || r.strides[d] < 0)
                return Error{where + " has a negative size or stride"};
            const auto c = times(count, static_cast<std::uint64_t>(r.shape[d]));
            if (!c) return Error{where + " has a shape whose size overflows"};
            count = *c;
            if (r.shape[d] > 0) {
                const auto step = times(static_cast<std::uint64_t>(r.shape[d] - 1),
                                        static_cast<std::uint64_t>(r.strides[d]));
                if (!step || __builtin_add_overflow(last, *step, &last))
                    return Error{where + " has strides that overflow"};
            }
        }
        if (count > 0 && last >= r.storageElements)
            return Error{where + ": its view (offset " + std::to_string(r.offset) + ", shape " +
                         shapeText(std::vector<Index>(r.shape.begin(), r.shape.end())) +
                         ") reads element " + std::to_string(last) + " of a storage of " +
                         std::to_string(r.storageElements)};
        if (count == 0 && r.offset > r.storageElements)
            return Error{where + ": its offset " + std::to_string(r.offset) +
                         " is past the end of its storage"};
    }
    std::set<std::string> held;
    for (const auto& r : records)
        held.insert(r.name);
    if (wanted)
        for (const auto& name : *wanted)
            if (!held.count(name))
                return Error{path + ": does not hold tensor '" + name +
                             "', which the index lists in it"};
    return std::nullopt;
}

/// Where a storage's bytes are: a file of `files` and the offset of its first byte.
struct StorageAt {
    std::size_t file = 0;
    std::size_t offset = 0;
};

/// The entries of `records` (checked by checkViews), each a view of its storage: in place when
/// contiguous, else gathered into a contiguous copy.
Status bindEntries(const std::string& path, const std::vector<TorchTensorRecord>& records,
                   const std::set<std::string>* wanted,
                   const std::map<std::string, StorageAt>& storages,
                   std::vector<std::shared_ptr<MappedFile>>& files,
                   std::map<std::string, TensorEntry>& entries) {
    for (const auto& r : records) {
        if (wanted && !wanted->count(r.name)) continue;
        if (entries.count(r.name))
            return Error{path + ": tensor '" + r.name + "' appears in two shards"};
        const StorageAt& storage = storages.at(r.storageKey);
        const std::size_t element = tensorDTypeBytes(r.dtype);
        TensorEntry entry;
        entry.name = r.name;
        entry.dtype = r.dtype;
        entry.shape.assign(r.shape.begin(), r.shape.end());
        const auto count = static_cast<std::size_t>(entry.elementCount());
        entry.bytes = count * element;
        // Contiguous (row-major, size-1 dimensions aside): read in place.
        bool contiguous = true;
        std::int64_t expected = 1;
        for (std::size_t d = r.shape.size(); d-- > 0;) {
            if (r.shape[d] != 1 && r.strides[d] != expected) contiguous = false;
            expected *= std::max<std::int64_t>(r.shape[d], 1);
        }
        if (count == 0 || contiguous) {
            entry.file = storage.file;
            entry.offset =
                storage.offset + (count == 0 ? 0 : static_cast<std::size_t>(r.offset) * element);
        } else { // a strided view: gathered into a contiguous copy
            const unsigned char* source = files[storage.file]->data() + storage.offset;
            std::vector<unsigned char> copy(entry.bytes);
            std::vector<std::int64_t> index(r.shape.size(), 0);
            for (std::size_t i = 0; i < count; ++i) {
                std::uint64_t at = r.offset;
                for (std::size_t d = 0; d < index.size(); ++d)
                    at += static_cast<std::uint64_t>(index[d] * r.strides[d]);
                std::memcpy(copy.data() + i * element, source + at * element, element);
                for (std::size_t d = index.size(); d-- > 0;) {
                    if (++index[d] < r.shape[d]) break;
                    index[d] = 0;
                }
            }
            entry.file = files.size();
            entry.offset = 0;
            files.push_back(MappedFile::fromBytes(path, std::move(copy)));
        }
        entries.emplace(r.name, std::move(entry));
    }
    return std::nullopt;
}

/// Reads the zip archive `path` into `files` and `entries`; with `wanted`, keeps only the
/// tensors the index names in this shard.
Status readArchive(const std::string& path, const std::set<std::string>* wanted,
                   std::vector<std::shared_ptr<MappedFile>>& files,
                   std::map<std::string, TensorEntry>& entries) {
    auto archive = TorchArchive::open(path);
    if (!archive) return Error{archive.error()};
    const std::string pickleName = archive->prefix() + "/data.pkl";
    auto pickle = archive->read(*archive->find(pickleName), pickleName);
    if (!pickle) return Error{pickle.error()};
    std::vector<TorchTensorRecord> records;
    try {
        auto read = readTorchPickle(pickle->data(), pickle->size(), path + "[" + pickleName + "]");
        if (!read) return Error{read.error()};
        records = std::move(*read);
    } catch (const std::bad_alloc&) {
        return Error{path + ": not enough memory for its pickle"};
    }

    // Every storage's file and every view checked before any storage is read.
    std::map<std::string, const Member*> members;
    for (const auto& r : records) {
        if (wanted && !wanted->count(r.name)) continue;
        const std::string memberName = archive->prefix() + "/data/" + r.storageKey;
        const Member* member = archive->find(memberName);
        const std::string where = path + ": tensor '" + r.name + "'";
        if (!member)
            return Error{where + " uses storage " + r.storageKey + ", which the archive lacks (" +
                         memberName + ")"};
        const auto bytes = times(r.storageElements, tensorDTypeBytes(r.dtype));
        if (!bytes || *bytes != member->size)
            return Error{where + ": storage " + r.storageKey + " of " +
                         std::to_string(r.storageElements) + " " + tensorDTypeName(r.dtype) +
                         " elements needs " + (bytes ? std::to_string(*bytes) : "too many") +
                         " bytes but its file " + memberName + " holds " +
                         std::to_string(member->size)};
        members[r.storageKey] = member;
    }
    if (auto error = checkViews(path, records, wanted)) return error;

    std::map<std::string, StorageAt> storages;
    for (const auto& [key, member] : members) {
        const std::string memberName = archive->prefix() + "/data/" + key;
        auto bytes = archive->read(*member, memberName);
        if (!bytes) return Error{bytes.error()};
        storages[key] = StorageAt{files.size(), 0};
        files.push_back(MappedFile::fromBytes(path, std::move(*bytes)));
    }
    return bindEntries(path, records, wanted, storages, files, entries);
}

/// PyTorch's format before 1.6 (torch.save(..., _use_new_zipfile_serialization=False)): five
/// pickles one after the other (the magic number, the protocol version 1001, a description of
/// the machine, the state dict with 6-field persistent ids, the sorted storage keys), then each
/// storage in that order as its element count (int64) and its bytes. Mapped; the storages are
/// read in place.
Status readLegacy(const std::string& path, const std::set<std::string>* wanted,
                  std::vector<std::shared_ptr<MappedFile>>& files,
                  std::map<std::string, TensorEntry>& entries) {
    auto mapped = MappedFile::open(path);
    if (!mapped) return Error{mapped.error()};
    const unsigned char* bytes = (*mapped)->data();
    const std::size_t size = (*mapped)->size();
    // The first pickle is the magic number 0x1950a86a20f9469cfc6c, as LONG1 under protocol 2.
    static const unsigned char kMagic[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46,
                                           0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19, 0x2e};
    if (size < sizeof kMagic || std::memcmp(bytes, kMagic, sizeof kMagic) != 0)
        return Error{path + ": not a PyTorch checkpoint (neither a zip archive nor the legacy "
                            "format's magic number)"};
    std::vector<TorchTensorRecord> records;
    std::vector<std::string> keys;
    std::size_t at = 0;
    try {
        PickleReader reader(bytes, size, path, sizeof kMagic);
        if (const auto version = reader.readInteger("the format's version"); version != 1001)
            return Error{path + ": legacy PyTorch format version " + std::to_string(version) +
                         ", not 1001"};
        if (reader.readDictFlag("little_endian") == false)
            return Error{path + ": saved on a big-endian machine; AttnLab reads little-endian"};
        records = reader.read();
        keys = reader.readStrings("the storage keys");
        at = reader.position();
    } catch (const PickleError& e) {
        return Error{e.message};
    } catch (const std::bad_alloc&) {
        return Error{path + ": not enough memory for its pickle"};
    }

    // Each storage's place, its length checked against the pickle's and the file's.
    std::map<std::string, std::pair<TensorDType, std::uint64_t>> declared;
    for (const auto& r : records)
        declared.try_emplace(r.storageKey, r.dtype, r.storageElements);
    std::map<std::string, StorageAt> storages;
    const std::size_t file = files.size();
    for (const auto& key : keys) {
        const auto it = declared.find(key);
        if (it == declared.end())
            return Error{path + ": storage " + key + " is listed but no tensor uses it"};
        if (size - at < 8)
            return Error{path + ": truncated: storage " + key + " is missing at byte " +
                         std::to_string(at)};
        std::int64_t count = 0;
        std::memcpy(&count, bytes + at, 8);
        at += 8;
        const auto [dtype, elements] = it->second;
        if (count < 0 || static_cast<std::uint64_t>(count) != elements)
            return Error{path + ": storage " + key + " holds " + std::to_string(count) +
                         " elements but the pickle says " + std::to_string(elements)};
        const auto length = times(elements, tensorDTypeBytes(dtype));
        if (!length || *length > size - at)
            return Error{path + ": storage " + key + " of " + std::to_string(elements) + " " +
                         tensorDTypeName(dtype) + " elements runs past the end of the file (" +
                         std::to_string(size) + " bytes)"};
        storages[key] = StorageAt{file, at};
        at += static_cast<std::size_t>(*length);
    }
    for (const auto& [key, type] : declared)
        if (!storages.count(key))
            return Error{path + ": storage " + key + " is used but not in the file"};
    if (auto error = checkViews(path, records, wanted)) return error;
    files.push_back(std::move(*mapped));
    return bindEntries(path, records, wanted, storages, files, entries);
}

/// A zip archive, or the legacy format.
Status readCheckpoint(const std::string& path, const std::set<std::string>* wanted,
                      std::vector<std::shared_ptr<MappedFile>>& files,
                      std::map<std::string, TensorEntry>& entries) {
    unsigned char magic[2] = {0, 0};
    std::ifstream in(path, std::ios::binary);
    in.read(reinterpret_cast<char*>(magic), 2);
    if (in && magic[0] == 0x80) return readLegacy(path, wanted, files, entries);
    return readArchive(path, wanted, files, entries);
}

} // namespace

Result<std::vector<TorchTensorRecord>> readTorchPickle(const unsigned char* bytes, std::size_t size,
                                                       const std::string& name) {
    try {
        return PickleReader(bytes, size, name).read();
    } catch (const PickleError& e) {
        return Error{e.message};
    }
}

Result<SafeTensors> openTorchCheckpoint(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::vector<std::shared_ptr<MappedFile>> files;
    std::map<std::string, TensorEntry> entries;
    if (!fs::is_directory(path, ec)) {
        if (auto error = readCheckpoint(path, nullptr, files, entries)) return *error;
        return SafeTensors::fromEntries(std::move(files), std::move(entries), path);
    }
    const fs::path single = fs::path(path) / "pytorch_model.bin";
    if (fs::exists(single, ec)) {
        if (auto error = readCheckpoint(single.string(), nullptr, files, entries)) return *error;
        return SafeTensors::fromEntries(std::move(files), std::move(entries), single.string());
    }
    const std::string indexPath = (fs::path(path) / "pytorch_model.bin.index.json").string();
    std::ifstream in(indexPath, std::ios::binary);
    if (!in)
        return Error{path + ": holds neither pytorch_model.bin nor pytorch_model.bin.index.json"};
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    Result<nlohmann::json> parsed = detail::parseJson(text);
    if (!parsed) return Error{indexPath + ": " + parsed.error()};
    const nlohmann::json& json = *parsed;
    if (!json.is_object() || !json.contains("weight_map") || !json["weight_map"].is_object())
        return Error{indexPath + ": has no weight_map object"};
    std::map<std::string, std::set<std::string>> shards; // file -> tensors
    for (const auto& [tensor, shard] : json["weight_map"].items()) {
        if (!shard.is_string())
            return Error{indexPath + ": weight_map entry '" + tensor + "' is not a file name"};
        const std::string file = shard.get<std::string>();
        if (file.empty() || file.find('/') != std::string::npos || file == "." || file == "..")
            return Error{indexPath + ": weight_map entry '" + tensor +
                         "' names a file outside the folder: '" + file + "'"};
        shards[file].insert(tensor);
    }
    if (shards.empty()) return Error{indexPath + ": weight_map is empty"};
    for (const auto& [file, tensors] : shards)
        if (auto error = readCheckpoint((fs::path(path) / file).string(), &tensors, files, entries))
            return *error;
    return SafeTensors::fromEntries(std::move(files), std::move(entries), indexPath);
}

} // namespace attnlab::model
