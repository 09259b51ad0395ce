// FlowLayout: a row of controls fills its width as a box layout would and wraps what does not
// fit, keeping a label with its field; a stretched item takes what is left of its row.
#include "ui/views/flow_layout.h"

#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>

#include <gtest/gtest.h>

namespace attnlab::ui {
namespace {

struct Row {
    QWidget widget;
    FlowLayout* layout = new FlowLayout(&widget);
    QList<QPushButton*> buttons;
    QSlider* slider = new QSlider(Qt::Horizontal);
    QLabel* label = new QLabel(QStringLiteral("block"));
    QSpinBox* field = new QSpinBox;
    Row() {
        layout->setContentsMargins(0, 0, 0, 0);
        layout->setSpacing(4);
        for (int i = 0; i < 4; ++i) {
            buttons << new QPushButton(QStringLiteral("Button %1").arg(i));
            layout->addWidget(buttons.last());
        }
        layout->addWidget(slider, 1);
        layout->addPair(label, field);
    }
    int oneRowWidth() const { return layout->sizeHint().width(); }
    void layOut(int width) {
        widget.resize(width, layout->heightForWidth(width));
        layout->setGeometry(QRect(0, 0, width, layout->heightForWidth(width)));
    }
};

TEST(FlowLayout, OneRowWhenItFitsAndTheStretchedItemTakesTheRest) {
    Row row;
    const int width = row.oneRowWidth() + 200;
    row.layOut(width);
    for (QPushButton* button : row.buttons)
        EXPECT_EQ(button->y(), row.buttons.first()->y());
    EXPECT_GE(row.slider->width(), row.slider->sizeHint().width() + 200 - 1);
    // The last item (the label and its field) ends at the right edge: nothing left over.
    const QRect pair = row.field->parentWidget()->geometry();
    EXPECT_NEAR(pair.y() + pair.height() / 2, row.buttons.first()->geometry().center().y(), 1);
    EXPECT_LE(width - (pair.right() + 1), 4); // integer shares of the leftover
    EXPECT_EQ(row.layout->heightForWidth(width), row.layout->sizeHint().height());
}

TEST(FlowLayout, WrapsWhatDoesNotFitAndKeepsALabelWithItsField) {
    Row row;
    const int narrow = row.buttons.first()->sizeHint().width() * 2 + 10;
    ASSERT_GE(narrow, row.layout->minimumSize().width());
    row.layOut(narrow);
    EXPECT_GT(row.layout->heightForWidth(narrow), row.layout->sizeHint().height() * 2);
    // Everything inside the width, nothing overlapping.
    QList<QRect> placed;
    for (QWidget* w : std::initializer_list<QWidget*>{row.buttons[0], row.buttons[1], row.buttons[2],
                                                      row.buttons[3], row.slider, row.label->parentWidget()}) {
        const QRect r = w->geometry();
        EXPECT_LE(r.right(), narrow) << w->metaObject()->className();
        for (const QRect& other : placed)
            EXPECT_FALSE(r.intersects(other));
        placed << r;
    }
    // A label and its field share a row: they share one widget the flow places.
    EXPECT_EQ(row.label->parentWidget(), row.field->parentWidget());
    EXPECT_NE(row.label->parentWidget(), &row.widget);
    // The least width is the widest item's: everything else wraps.
    int widest = 0;
    for (QPushButton* button : row.buttons)
        widest = std::max(widest, button->minimumSizeHint().width());
    EXPECT_LE(row.layout->minimumSize().width(), std::max(widest, row.label->parentWidget()->minimumSizeHint().width()));
}

} // namespace
} // namespace attnlab::ui
