// Keeps attnlab_ui non-empty until its first widget lands.
namespace attnlab::ui {
int placeholder() { return 0; }
} // namespace attnlab::ui
