#pragma once
/// The list of views the window shows as tabs and `attnlab render --view NAME` can draw.
/// A new view plugs in with one entry here (id, factory); the order is the tab order and the
/// Ctrl+1..9 shortcut order.

#include <QString>
#include <QStringList>

#include <functional>
#include <vector>

class QWidget;

namespace attnlab::ui {

class Document;
class View;

struct ViewEntry {
    QString id; ///< stable name: heatmap, heads, entropy, statistics, compare
    std::function<View*(Document*, QWidget*)> create;
};

/// Every registered view, in tab order.
const std::vector<ViewEntry>& viewRegistry();
/// The ids of viewRegistry(), in order.
QStringList viewIds();
/// A new view by id, or null when the id is unknown.
View* createView(const QString& id, Document* document, QWidget* parent = nullptr);

} // namespace attnlab::ui
