// Placeholder until the render command lands.
#include <iostream>

#include "commands.h"

namespace attnlab::app {
int renderCommand(int, char**) {
    std::cerr << "attnlab render: not available yet\n";
    return 2;
}
} // namespace attnlab::app
