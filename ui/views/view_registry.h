#pragma once
/// The list of views the window shows as tabs and `attnlab render --view NAME` can draw.
/// A new view plugs in with one entry here (id, group, factory). The window shows the views
/// in named groups (viewGroups(): Attention, Step through, Real model), one row of tabs per
/// group; within a group the registry's order is the tab order and the Ctrl+1..9 order.

#include <QString>
#include <QStringList>

#include <functional>
#include <vector>

class QWidget;

namespace attnlab::ui {

class Document;
class View;

struct ViewEntry {
    QString id;    ///< stable name: heatmap, heads, entropy, statistics, compare
    QString group; ///< the id of its group in viewGroups()
    std::function<View*(Document*, QWidget*)> create;
};

/// A named group of views: what the class sees as one row of tabs.
struct ViewGroup {
    QString id;              ///< stable name: attention, steps, model
    const char* title;       ///< untranslated; viewGroupTitle() gives it in the current language
    const char* description; ///< untranslated; viewGroupDescription()
};

/// The groups, in the order the window shows them.
const std::vector<ViewGroup>& viewGroups();
/// The ids of viewGroups(), in order.
QStringList viewGroupIds();
/// The group's title and one-line description in the current language (empty if unknown).
QString viewGroupTitle(const QString& groupId);
QString viewGroupDescription(const QString& groupId);
/// The ids of the views of one group, in tab order.
QStringList viewIdsInGroup(const QString& groupId);
/// The group a view belongs to (empty for an unknown view).
QString viewGroupOf(const QString& viewId);

/// Every registered view, group by group, in tab order.
const std::vector<ViewEntry>& viewRegistry();
/// The ids of viewRegistry(), in order.
QStringList viewIds();
/// A new view by id, or null when the id is unknown.
View* createView(const QString& id, Document* document, QWidget* parent = nullptr);

} // namespace attnlab::ui
