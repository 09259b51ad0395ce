#include "ui/window/input_guard.h"

#include <QAbstractScrollArea>
#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QKeyEvent>
#include <QLineEdit>
#include <QScrollBar>
#include <QWheelEvent>

namespace attnlab::ui {

namespace {

/// A field whose value the wheel changes.
bool wheelChangesValue(const QWidget* widget) {
    return qobject_cast<const QAbstractSpinBox*>(widget) ||
           qobject_cast<const QComboBox*>(widget) || qobject_cast<const QAbstractSlider*>(widget);
}

/// The field a widget belongs to (a spin box's line edit belongs to the spin box).
QWidget* fieldOf(QWidget* widget) {
    for (QWidget* w = widget; w; w = w->parentWidget()) {
        if (wheelChangesValue(w)) return w;
        if (w->isWindow()) break;
    }
    return nullptr;
}

/// A text or number field that reads keys as editing commands.
bool isTextField(const QWidget* widget) {
    for (const QWidget* w = widget; w; w = w->parentWidget()) {
        if (qobject_cast<const QLineEdit*>(w) || qobject_cast<const QAbstractSpinBox*>(w))
            return true;
        if (w->isWindow()) break;
    }
    return false;
}

/// The keys a text field keeps even when the window has a shortcut on them.
bool isEditingKey(const QKeyEvent* key) {
    static const QKeySequence::StandardKey editing[] = {
        QKeySequence::Copy,      QKeySequence::Cut,        QKeySequence::Paste,
        QKeySequence::Undo,      QKeySequence::Redo,       QKeySequence::SelectAll,
        QKeySequence::Delete,    QKeySequence::Backspace,  QKeySequence::DeleteStartOfWord,
        QKeySequence::DeleteEndOfWord, QKeySequence::MoveToNextWord,
        QKeySequence::MoveToPreviousWord, QKeySequence::SelectNextWord,
        QKeySequence::SelectPreviousWord, QKeySequence::MoveToStartOfLine,
        QKeySequence::SelectStartOfLine};
    for (QKeySequence::StandardKey standard : editing)
        if (key->matches(standard)) return true;
    return false;
}

/// Whether `sequence` is the shortcut of one of the window's actions.
bool isWindowShortcut(const QWidget* window, const QKeySequence& sequence) {
    for (const QAction* action : window->findChildren<QAction*>())
        if (action->isEnabled() && action->shortcuts().contains(sequence)) return true;
    for (const QAction* action : window->actions())
        if (action->isEnabled() && action->shortcuts().contains(sequence)) return true;
    return false;
}

/// The nearest scroll area holding `widget` with a vertical scroll bar to move, if any.
QAbstractScrollArea* scrollAreaOf(QWidget* widget) {
    for (QWidget* w = widget ? widget->parentWidget() : nullptr; w; w = w->parentWidget()) {
        if (auto* area = qobject_cast<QAbstractScrollArea*>(w)) return area;
        if (w->isWindow()) break;
    }
    return nullptr;
}

} // namespace

InputGuard::InputGuard(QWidget* window) : QObject(window), m_window(window) {
    qApp->installEventFilter(this);
}

InputGuard::~InputGuard() {
    qApp->removeEventFilter(this);
}

bool InputGuard::eventFilter(QObject* watched, QEvent* event) {
    const QEvent::Type type = event->type();
    if (type != QEvent::Wheel && type != QEvent::KeyPress && type != QEvent::ShortcutOverride)
        return false;
    auto* widget = qobject_cast<QWidget*>(watched);
    if (!widget || widget->window() != m_window) return false;

    if (type == QEvent::Wheel) {
        QWidget* field = fieldOf(widget);
        if (!field || field->hasFocus() || field->isAncestorOf(QApplication::focusWidget()))
            return false;
        // Not the field's: what holds it scrolls (Qt passes an ignored wheel to the parent).
        event->ignore();
        return true;
    }

    auto* key = static_cast<QKeyEvent*>(event);
    if (type == QEvent::ShortcutOverride) {
        // A field would take Ctrl+E as "end of line" and the window's shortcut would never
        // fire: the window's shortcuts win over a field's non-editing keys.
        if (!isTextField(widget) || !(key->modifiers() & Qt::ControlModifier) ||
            isEditingKey(key))
            return false;
        const QKeySequence sequence(key->keyCombination());
        if (!isWindowShortcut(m_window, sequence)) return false;
        event->ignore();
        return true;
    }

    // PageUp/PageDown on a closed combo box turn the page of the panel around it.
    auto* combo = qobject_cast<QComboBox*>(widget);
    if (!combo || combo->isEditable() || key->modifiers() != Qt::NoModifier ||
        (key->key() != Qt::Key_PageDown && key->key() != Qt::Key_PageUp))
        return false;
    if (QAbstractScrollArea* area = scrollAreaOf(combo))
        area->verticalScrollBar()->triggerAction(key->key() == Qt::Key_PageDown
                                                     ? QAbstractSlider::SliderPageStepAdd
                                                     : QAbstractSlider::SliderPageStepSub);
    return true;
}

} // namespace attnlab::ui
