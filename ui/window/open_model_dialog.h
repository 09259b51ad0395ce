#pragma once
/// File > Open Model…: the models already on this machine, so a model opens by a click: the
/// bundled trained models and every snapshot in the Hugging Face cache (hub_cache.h: where
/// huggingface_hub and transformers keep what they downloaded), each with its revision, size,
/// model_type and whether AttnLab runs it, and if not, why. Choose Folder… opens any other
/// folder; a Hub id typed below the list is downloaded into the cache (HubDownloadDialog) and
/// opened; a filter narrows a long list. Open is enabled only on a model that runs; one that
/// does not is greyed, and the line below the list gives its whole reason.
///
///   OpenModelDialog dialog({{"tiny-llama-induction", folder}}, window);
///   if (dialog.exec() == QDialog::Accepted) models->openModel(dialog.chosenFolder());

#include <QDialog>
#include <QList>
#include <QPair>
#include <QString>

class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTreeWidget;
class QTreeWidgetItem;

namespace attnlab::ui {

class OpenModelDialog : public QDialog {
    Q_OBJECT
public:
    /// Columns of the list.
    enum Column { Name, Revision, Size, Type, Runs };
    /// Data role of an item: the folder it opens (empty on group rows).
    static constexpr int FolderRole = Qt::UserRole + 1;
    /// Data role of an item: whether AttnLab runs the model (Open opens only those).
    static constexpr int RunsRole = Qt::UserRole + 2;
    /// Data role of an item: why AttnLab does not run it (empty when it does).
    static constexpr int WhyRole = Qt::UserRole + 3;

    /// `bundled`: (name, folder) of the models shipped with the program; the cache is read
    /// from hubCacheRoot() now.
    explicit OpenModelDialog(const QList<QPair<QString, QString>>& bundled,
                             QWidget* parent = nullptr);

    /// The folder to open once accepted: the chosen model's, or the one Choose Folder… picked.
    QString chosenFolder() const { return m_chosen; }

    QTreeWidget* list() const { return m_list; }
    QLineEdit* filter() const { return m_filter; }
    QPushButton* openButton() const { return m_open; }
    QLabel* cacheNote() const { return m_cacheNote; }
    QLineEdit* hubId() const { return m_hubId; }
    QPushButton* hubDownloadButton() const { return m_hubDownload; }
    /// The current model's folder, or the whole reason it does not run.
    QLabel* detail() const { return m_detail; }

    /// Accepts with `folder`, as Open on a listed model or Choose Folder… does.
    void choose(const QString& folder);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void addRow(QTreeWidgetItem* group, const QString& name, const QString& revision,
                const QString& folder, bool runs, const QString& why, const QString& size,
                const QString& type);
    void applyFilter(const QString& text);
    void updateOpen();
    static bool opens(const QTreeWidgetItem* item);

    QTreeWidget* m_list = nullptr;
    QLineEdit* m_filter = nullptr;
    QLabel* m_cacheNote = nullptr;
    QLabel* m_detail = nullptr;
    QPushButton* m_open = nullptr;
    QLineEdit* m_hubId = nullptr;
    QPushButton* m_hubDownload = nullptr;
    QDialogButtonBox* m_buttons = nullptr;
    QString m_chosen;
};

} // namespace attnlab::ui
