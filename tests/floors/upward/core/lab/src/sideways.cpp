// The lab and the tokenizer share a floor: neither may include the other.
#include "attnlab/io/npy.h"
#include "attnlab/tokenizer/tokenizer.h"
