#pragma once
// The attnlab commands. Each takes the arguments after its name and returns the process
// exit status: 0 on success, 2 on bad input (after one line on stderr).

namespace attnlab::app {

int computeCommand(int argc, char** argv);
int benchCommand(int argc, char** argv);
int modelCommand(int argc, char** argv);
int tokenizeCommand(int argc, char** argv);
#ifdef ATTNLAB_HAS_UI
int renderCommand(int argc, char** argv);
int guiMain(int argc, char** argv);
#endif

} // namespace attnlab::app
