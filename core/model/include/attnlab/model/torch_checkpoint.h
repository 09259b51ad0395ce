#pragma once
/// PyTorch's own checkpoints (`pytorch_model.bin`), read safely: since PyTorch 1.6 a zip
/// archive holding PREFIX/data.pkl, a pickle of the state dict, and PREFIX/data/KEY, one file
/// per storage (and before 1.6 the same pickle followed by the storages). The pickle is read by a
/// restricted reader that accepts only what torch.load(weights_only=True) accepts for a state dict,
/// and never runs anything: the opcodes torch.save's protocol 2 writes, GLOBALs limited to
/// torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter, collections.OrderedDict
/// and the torch.*Storage types, REDUCE only on the first three, and persistent ids
/// ('storage', TYPE, KEY, LOCATION, NUMEL[, None]). Any other opcode or global is refused, naming
/// it. Every storage's size is checked against its file, and every view (offset, shape, strides)
/// against its storage, before a byte of it is read.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attnlab/base/result.h"
#include "attnlab/model/safetensors.h"

namespace attnlab::model {

/// One tensor of the state dict as the pickle describes it: a view of a storage.
struct TorchTensorRecord {
    std::string name;
    std::string storageKey; ///< the storage's file: PREFIX/data/KEY
    TensorDType dtype = TensorDType::F32;
    std::uint64_t storageElements = 0; ///< the storage's length, as its persistent id says
    std::uint64_t offset = 0;          ///< the view's first element in the storage
    std::vector<std::int64_t> shape;
    std::vector<std::int64_t> strides; ///< in elements
};

/// The tensors of a pickled state dict (`bytes` is data.pkl), in the dict's order; entries
/// that are not tensors are left out. `name` starts every message. Errors: an opcode or a
/// global outside the list above (named), a REDUCE of anything but the rebuilds, a malformed
/// rebuild or persistent id, a truncated or inconsistent pickle, a state dict with no tensor.
Result<std::vector<TorchTensorRecord>> readTorchPickle(const unsigned char* bytes, std::size_t size,
                                                       const std::string& name);

/// A PyTorch zip checkpoint: the file `path`, or in the folder `path` pytorch_model.bin or
/// pytorch_model.bin.index.json with its shards. Every storage a tensor uses is read into
/// memory once (tensors sharing a storage, such as tied weights, share its bytes); a view is
/// read in place when contiguous, else copied contiguous. PyTorch's legacy format (before
/// 1.6: the pickles one after the other, then the storages, no zip) is read too, mapped, by
/// the same pickle reader.
Result<SafeTensors> openTorchCheckpoint(const std::string& path);

} // namespace attnlab::model
