#include "ui/window/open_model_dialog.h"

#include <QDialogButtonBox>
#include <QEvent>
#include <QFileDialog>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QGuiApplication>
#include <QPushButton>
#include <QHBoxLayout>
#include <QScreen>
#include <QTreeWidget>
#include <QTreeWidgetItemIterator>
#include <QVBoxLayout>

#include "attnlab/model/architecture.h"
#include "attnlab/model/hub_cache.h"
#include "attnlab/model/hub_download.h"
#include "ui/window/hub_download_dialog.h"

namespace attnlab::ui {

namespace {

QString text(const std::string& s) {
    return QString::fromStdString(s);
}

} // namespace

OpenModelDialog::OpenModelDialog(const QList<QPair<QString, QString>>& bundled, QWidget* parent)
    : QDialog(parent) {
    setWindowTitle(tr("Open Model"));
    setObjectName(QStringLiteral("OpenModelDialog"));
    auto* layout = new QVBoxLayout(this);

    m_filter = new QLineEdit(this);
    m_filter->setPlaceholderText(tr("Filter by name or model type"));
    m_filter->setClearButtonEnabled(true);
    layout->addWidget(m_filter);

    m_list = new QTreeWidget(this);
    m_list->setHeaderLabels(
        {tr("Model"), tr("Revision"), tr("Size"), tr("Model type"), tr("Runs")});
    m_list->setRootIsDecorated(false);
    m_list->setUniformRowHeights(true);
    m_list->setAllColumnsShowFocus(true);
    layout->addWidget(m_list, 1);

    // The bundled models, then the cache's, each under a group row.
    auto* bundledGroup = new QTreeWidgetItem(m_list, {tr("Bundled with AttnLab")});
    for (const auto& [name, folder] : bundled) {
        const model::CachedSnapshot info = model::describeModelFolder(folder.toStdString());
        addRow(bundledGroup, name, QString(), folder, info.runs, text(info.why),
               text(model::sizeText(info.bytes)), text(info.modelType));
    }
    const std::string root = model::hubCacheRoot();
    const auto cached = model::listHubCache(root);
    auto* cacheGroup = new QTreeWidgetItem(m_list, {tr("Hugging Face cache")});
    for (const auto& cachedModel : cached)
        for (const auto& snapshot : cachedModel.snapshots) {
            QStringList refs;
            for (const auto& ref : snapshot.refs)
                refs << text(ref);
            const QString revision = refs.isEmpty() ? text(snapshot.commit.substr(0, 12))
                                                    : refs.join(QStringLiteral(", "));
            addRow(cacheGroup, text(cachedModel.id), revision, text(snapshot.folder),
                   snapshot.runs, text(snapshot.why), text(model::sizeText(snapshot.bytes)),
                   text(snapshot.modelType));
        }
    for (QTreeWidgetItem* group : {bundledGroup, cacheGroup}) {
        group->setFlags(Qt::ItemIsEnabled);
        QFont font = group->font(Name);
        font.setBold(true);
        group->setFont(Name, font);
        group->setFirstColumnSpanned(true);
    }
    cacheGroup->setHidden(cacheGroup->childCount() == 0); // the note below says so
    m_list->expandAll();
    for (int column = Name; column < Runs; ++column)
        m_list->resizeColumnToContents(column);

    // The chosen model's folder, or why it does not run, whole (the column may cut it).
    m_detail = new QLabel(this);
    m_detail->setWordWrap(true);
    m_detail->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_detail);

    m_cacheNote = new QLabel(this);
    m_cacheNote->setWordWrap(true);
    m_cacheNote->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_cacheNote->setText(
        cached.empty()
            ? tr("No models in the Hugging Face cache at %1. Type a Hub id below to download "
                 "one (AttnLab runs %2), or choose a folder.")
                  .arg(text(root), text(model::architectureList()))
            : tr("Hugging Face cache: %1 (the models AttnLab, transformers and huggingface-cli "
                 "downloaded; set HF_HUB_CACHE or HF_HOME to read another).")
                  .arg(text(root)));
    layout->addWidget(m_cacheNote);

    // A model not on the machine: by its Hub id, downloaded into the cache, then opened.
    auto* hubRow = new QHBoxLayout;
    auto* hubLabel = new QLabel(tr("Download from the &Hub:"), this);
    m_hubId = new QLineEdit(this);
    m_hubId->setPlaceholderText(tr("ORG/NAME, e.g. openai-community/gpt2"));
    hubLabel->setBuddy(m_hubId);
    m_hubDownload = new QPushButton(tr("Download\u2026"), this);
    m_hubDownload->setAutoDefault(false);
    hubRow->addWidget(hubLabel);
    hubRow->addWidget(m_hubId, 1);
    hubRow->addWidget(m_hubDownload);
    layout->addLayout(hubRow);
    const bool offline = model::hubOffline();
    const auto updateHub = [this, offline] {
        const bool valid = model::parseHubId(m_hubId->text().trimmed().toStdString()).has_value();
        m_hubDownload->setEnabled(!offline && valid);
        m_hubDownload->setToolTip(
            offline ? tr("HF_HUB_OFFLINE is set: AttnLab reads the cache only")
            : valid ? tr("Ask %1 for this model's files, then download them into the cache")
                          .arg(text(model::hubEndpoint()))
                    : tr("Type a Hub id: ORG/NAME, or NAME, with @REVISION for a branch, tag or "
                         "commit"));
    };
    connect(m_hubId, &QLineEdit::textChanged, this, updateHub);
    updateHub();
    const auto downloadFromHub = [this] {
        if (!m_hubDownload->isEnabled()) return;
        HubDownloadDialog dialog(m_hubId->text().trimmed(), this);
        if (dialog.exec() == QDialog::Accepted) choose(dialog.folder());
    };
    connect(m_hubDownload, &QPushButton::clicked, this, downloadFromHub);
    // Enter in the id's field downloads (the field's focus makes Download the default button).
    m_hubId->installEventFilter(this);

    m_buttons = new QDialogButtonBox(this);
    m_open = m_buttons->addButton(tr("Open"), QDialogButtonBox::AcceptRole);
    m_open->setDefault(true);
    QPushButton* folderButton =
        m_buttons->addButton(tr("Choose Folder\u2026"), QDialogButtonBox::ActionRole);
    folderButton->setToolTip(tr("Any folder with config.json and its weights (*.safetensors or "
                                "pytorch_model.bin), and tokenizer.json"));
    m_buttons->addButton(QDialogButtonBox::Cancel);
    layout->addWidget(m_buttons);

    connect(m_filter, &QLineEdit::textChanged, this, &OpenModelDialog::applyFilter);
    connect(m_list, &QTreeWidget::currentItemChanged, this, &OpenModelDialog::updateOpen);
    connect(m_list, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
        if (opens(item)) choose(item->data(Name, FolderRole).toString());
    });
    connect(m_open, &QPushButton::clicked, this, [this] {
        if (QTreeWidgetItem* item = m_list->currentItem(); opens(item))
            choose(item->data(Name, FolderRole).toString());
    });
    connect(folderButton, &QPushButton::clicked, this, [this] {
        const QString folder = QFileDialog::getExistingDirectory(
            this, tr("Open a model folder (config.json, *.safetensors, tokenizer.json)"));
        if (!folder.isEmpty()) choose(folder);
    });
    // Open accepts through choose(), with its folder; the box's accepted() is not connected.
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    // Start on the first model that runs.
    for (QTreeWidgetItemIterator it(m_list); *it; ++it)
        if (opens(*it)) {
            m_list->setCurrentItem(*it);
            break;
        }
    updateOpen();
    m_list->setFocus();
    // Wide enough for an id, a path and a reason at the theme's font, within the screen.
    QSize size(fontMetrics().averageCharWidth() * 120, fontMetrics().height() * 30);
    if (const QScreen* screen = parent ? parent->screen() : QGuiApplication::primaryScreen())
        size = size.boundedTo(screen->availableGeometry().size() * 0.9);
    resize(size);
}

void OpenModelDialog::addRow(QTreeWidgetItem* group, const QString& name,
                             const QString& revision, const QString& folder, bool runs,
                             const QString& why, const QString& size, const QString& type) {
    auto* item = new QTreeWidgetItem(
        group, {name, revision, size, type.isEmpty() ? QStringLiteral("-") : type,
                runs ? tr("yes") : tr("no: %1").arg(why)});
    item->setData(Name, FolderRole, folder);
    item->setData(Name, RunsRole, runs);
    item->setData(Name, WhyRole, runs ? QString() : why);
    item->setTextAlignment(Size, Qt::AlignRight | Qt::AlignVCenter);
    const QString tip = runs ? folder : tr("AttnLab does not run this model: %1").arg(why);
    for (int column = Name; column <= Runs; ++column) {
        item->setToolTip(column, tip);
        // Listed, so that what is in the cache is seen with its reason, greyed, not opened;
        // still selectable, so the line below the list can show the whole reason.
        if (!runs)
            item->setForeground(column, palette().brush(QPalette::Disabled, QPalette::Text));
    }
}

void OpenModelDialog::applyFilter(const QString& text) {
    for (int g = 0; g < m_list->topLevelItemCount(); ++g) {
        QTreeWidgetItem* group = m_list->topLevelItem(g);
        for (int i = 0; i < group->childCount(); ++i) {
            QTreeWidgetItem* item = group->child(i);
            const bool shown = text.isEmpty() ||
                               item->text(Name).contains(text, Qt::CaseInsensitive) ||
                               item->text(Type).contains(text, Qt::CaseInsensitive);
            item->setHidden(!shown);
        }
    }
    if (QTreeWidgetItem* current = m_list->currentItem(); current && current->isHidden())
        m_list->setCurrentItem(nullptr);
    updateOpen();
}

bool OpenModelDialog::opens(const QTreeWidgetItem* item) {
    return item && !item->isHidden() && item->data(Name, RunsRole).toBool();
}

void OpenModelDialog::updateOpen() {
    const QTreeWidgetItem* item = m_list->currentItem();
    m_open->setEnabled(opens(item));
    if (!item || item->isHidden() || item->data(Name, FolderRole).toString().isEmpty())
        m_detail->clear();
    else if (opens(item))
        m_detail->setText(item->data(Name, FolderRole).toString());
    else
        m_detail->setText(
            tr("AttnLab does not run this model: %1").arg(item->data(Name, WhyRole).toString()));
}

bool OpenModelDialog::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_hubId && event->type() == QEvent::FocusIn) m_hubDownload->setDefault(true);
    if (watched == m_hubId && event->type() == QEvent::FocusOut) m_open->setDefault(true);
    return QDialog::eventFilter(watched, event);
}

void OpenModelDialog::choose(const QString& folder) {
    if (folder.isEmpty()) return;
    m_chosen = folder;
    accept();
}

} // namespace attnlab::ui
