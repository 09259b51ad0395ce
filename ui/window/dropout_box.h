#pragma once
/// DropoutBox: the inputs panel's attention-dropout group (seed 003: d2l's attention applies
/// nn.Dropout to its weights while training). A train/eval switch, the rate p and the seed of
/// the drop pattern; every change is one undoable Document edit and the box follows the
/// Document on undo/redo. Eval mode shows exactly the attention without dropout.

#include <QGroupBox>

#include "ui/state/document.h"

class QDoubleSpinBox;
class QLabel;
class QRadioButton;
class QSpinBox;

namespace attnlab::ui {

class DropoutBox : public QGroupBox {
    Q_OBJECT
public:
    explicit DropoutBox(Document* document, QWidget* parent = nullptr);

    QRadioButton* evalButton() const { return m_eval; }
    QRadioButton* trainButton() const { return m_train; }
    QDoubleSpinBox* rateSpin() const { return m_rate; }
    QSpinBox* seedSpin() const { return m_seed; }
    /// One line on what the mode does to the weights now.
    QLabel* note() const { return m_note; }

private:
    void updateFromSession();

    Document* m_document;
    QRadioButton* m_eval = nullptr;
    QRadioButton* m_train = nullptr;
    QDoubleSpinBox* m_rate = nullptr;
    QSpinBox* m_seed = nullptr;
    QLabel* m_note = nullptr;
};

} // namespace attnlab::ui
