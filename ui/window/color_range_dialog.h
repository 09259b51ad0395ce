#pragma once
/// ColorRangeDialog: asks for the heatmap's chosen colour range (view.color_range), the
/// weights from a low to a high end spanning the colour map. OK only while low < high.

#include <QDialog>

#include <optional>
#include <utility>

class QDialogButtonBox;
class QDoubleSpinBox;
class QLabel;

namespace attnlab::ui {

class ColorRangeDialog : public QDialog {
    Q_OBJECT
public:
    /// Starts at [low, high], each clamped to the weights' 0 to 1.
    ColorRangeDialog(double low, double high, QWidget* parent = nullptr);

    QDoubleSpinBox* lowSpin() const { return m_low; }
    QDoubleSpinBox* highSpin() const { return m_high; }
    QDialogButtonBox* buttons() const { return m_buttons; }
    std::pair<double, double> range() const;

private:
    void updateAcceptable();

    QDoubleSpinBox* m_low = nullptr;
    QDoubleSpinBox* m_high = nullptr;
    QLabel* m_problem = nullptr;
    QDialogButtonBox* m_buttons = nullptr;
};

/// Shows the dialog (modal): the range accepted, or nullopt when cancelled.
std::optional<std::pair<double, double>> askColorRange(QWidget* parent, double low, double high);

} // namespace attnlab::ui
