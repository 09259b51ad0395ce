#pragma once
/// FlowLayout: a row of controls that wraps onto further rows when the width runs out, so a
/// view's controls never set the window's least width (a 1024 x 768 projector beside the
/// inputs). A row takes as many items as fit at their least widths and shares its width as a
/// box layout would; a stretched item (a slider) takes what is left past the size hints.

#include <QLayout>
#include <QList>

namespace attnlab::ui {

class FlowLayout : public QLayout {
public:
    explicit FlowLayout(QWidget* parent = nullptr);
    ~FlowLayout() override;
    FlowLayout(const FlowLayout&) = delete;
    FlowLayout& operator=(const FlowLayout&) = delete;

    /// `stretch` > 0: the widget also takes what is left of its row (a slider).
    void addWidget(QWidget* widget, int stretch = 0);
    /// A label and the field it names, kept together on one row.
    void addPair(QWidget* label, QWidget* field);

    void addItem(QLayoutItem* item) override;
    int count() const override;
    QLayoutItem* itemAt(int index) const override;
    QLayoutItem* takeAt(int index) override;
    Qt::Orientations expandingDirections() const override;
    bool hasHeightForWidth() const override;
    int heightForWidth(int width) const override;
    QSize minimumSize() const override;
    QSize sizeHint() const override;
    void setGeometry(const QRect& rect) override;

private:
    /// Lays the items out in `rect` (placing them when `apply`); returns the height used.
    int arrange(const QRect& rect, bool apply) const;
    int gap() const;

    QList<QLayoutItem*> m_items;
    QList<int> m_stretch;
};

} // namespace attnlab::ui
