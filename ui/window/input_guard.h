#pragma once
/// InputGuard: the keyboard and mouse wheel as good desktop applications treat them, for every
/// field of one window (installed on the application, it watches that window's widgets):
///
/// - the wheel changes a spin box, combo box or slider only while it has focus; over one that
///   does not, the wheel scrolls what holds it (the inputs panel at 720 px), as a page does;
/// - PageUp/PageDown on a closed combo box turn the page of the panel holding it, not its
///   value;
/// - the window's own shortcuts (Ctrl+E, Export Figure) work while a text or number field has
///   focus: a field claims only its editing keys (copy, paste, undo, select all ...), not a
///   Ctrl+letter it would read as "end of line".
///
///   new InputGuard(&window);   // owned by the window

#include <QObject>

class QWidget;

namespace attnlab::ui {

class InputGuard : public QObject {
    Q_OBJECT
public:
    /// Guards the widgets of `window` (the guard is its child).
    explicit InputGuard(QWidget* window);
    ~InputGuard() override;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QWidget* m_window;
};

} // namespace attnlab::ui
