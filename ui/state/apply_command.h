#pragma once
// ApplyCommand<Value>: the one undo step the window's documents push. It holds a value before
// and after an edit and a function that applies one: redo applies `after`, undo `before`.
// Steps with the same merge id (>= 0) pushed in a row merge into one, keeping the first
// `before` and the last `after` (a burst of typing is one step). The function runs only
// while `owner` exists: a step left on the stack by an object that is gone does nothing.
//
//   stack->push(new ApplyCommand<HeadSet>(models, [models](const HeadSet& h) { ... },
//                                         before, after, -1, tr("Switch off a head")));

#include <QObject>
#include <QPointer>
#include <QString>
#include <QUndoCommand>

#include <functional>
#include <utility>

namespace attnlab::ui {

template <typename Value> class ApplyCommand : public QUndoCommand {
public:
    using Apply = std::function<void(const Value&)>;

    ApplyCommand(QObject* owner, Apply apply, Value before, Value after, int mergeId,
                 const QString& text)
        : QUndoCommand(text), m_owner(owner), m_apply(std::move(apply)),
          m_before(std::move(before)), m_after(std::move(after)), m_mergeId(mergeId) {}

    void redo() override {
        if (m_owner) m_apply(m_after);
    }
    void undo() override {
        if (m_owner) m_apply(m_before);
    }
    int id() const override { return m_mergeId; }
    bool mergeWith(const QUndoCommand* other) override {
        if (other->id() != id() || m_mergeId < 0) return false;
        m_after = static_cast<const ApplyCommand*>(other)->m_after;
        return true;
    }

private:
    QPointer<QObject> m_owner;
    Apply m_apply;
    Value m_before;
    Value m_after;
    int m_mergeId;
};

} // namespace attnlab::ui
