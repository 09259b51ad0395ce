#include "ui/window/color_range_dialog.h"

#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include "attnlab/lab/session.h"

namespace attnlab::ui {

namespace {

/// Six decimals: a long text's weights are near 1/S (0.001 at 1000 tokens), and a range
/// such as 0.0005 to 0.002 must be typed as it is meant.
constexpr int kDecimals = 6;

QDoubleSpinBox* endSpin(double value, const QString& name, QWidget* parent) {
    auto* spin = new QDoubleSpinBox(parent);
    spin->setObjectName(name);
    spin->setDecimals(kDecimals);
    spin->setRange(0.0, 1.0); // weights lie in [0, 1]
    spin->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
    spin->setValue(value);
    return spin;
}

} // namespace

ColorRangeDialog::ColorRangeDialog(double low, double high, QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Chosen Colour Range"));
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(tr("The weights from the low end to the high end span the colour "
                                "map; weights outside take its end colours. A long text's "
                                "weights are near 1/S: at 1000 tokens, try 0 to 0.01."),
                             this);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    auto* form = new QFormLayout;
    m_low = endSpin(low, QStringLiteral("colorLow"), this);
    m_high = endSpin(high, QStringLiteral("colorHigh"), this);
    form->addRow(tr("Low end:"), m_low);
    form->addRow(tr("High end:"), m_high);
    layout->addLayout(form);
    m_problem = new QLabel(tr("The low end must be less than the high end."), this);
    m_problem->setWordWrap(true);
    // Its room kept while hidden: the dialog does not grow (and cut its text) when it shows.
    QSizePolicy keepRoom = m_problem->sizePolicy();
    keepRoom.setRetainSizeWhenHidden(true);
    m_problem->setSizePolicy(keepRoom);
    layout->addWidget(m_problem);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    layout->addWidget(m_buttons);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    for (QDoubleSpinBox* spin : {m_low, m_high})
        connect(spin, &QDoubleSpinBox::valueChanged, this, &ColorRangeDialog::updateAcceptable);
    updateAcceptable();
}

std::pair<double, double> ColorRangeDialog::range() const {
    return {m_low->value(), m_high->value()};
}

void ColorRangeDialog::updateAcceptable() {
    const bool acceptable = !colorRangeProblem(m_low->value(), m_high->value());
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(acceptable);
    m_problem->setVisible(!acceptable);
}

std::optional<std::pair<double, double>> askColorRange(QWidget* parent, double low, double high) {
    ColorRangeDialog dialog(low, high, parent);
    if (dialog.exec() != QDialog::Accepted) return std::nullopt;
    return dialog.range();
}

} // namespace attnlab::ui
