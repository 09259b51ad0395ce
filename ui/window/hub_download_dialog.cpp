#include "ui/window/hub_download_dialog.h"

#include <QDialogButtonBox>
#include <QGuiApplication>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QScreen>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <chrono>

namespace attnlab::ui {
namespace {

QString text(const std::string& s) {
    return QString::fromStdString(s);
}

QString bytesText(std::uint64_t bytes) {
    return text(model::sizeText(bytes));
}

double secondsNow() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

} // namespace

HubDownloadDialog::HubDownloadDialog(const QString& id, QWidget* parent)
    : QDialog(parent),
      m_planning(this, [this](Result<model::HubDownloadPlan> plan) { planned(std::move(plan)); }),
      m_downloading(this, [this](Result<std::string> folder) { downloaded(std::move(folder)); }) {
    setWindowTitle(tr("Download from the Hugging Face Hub"));
    if (const auto parsed = model::parseHubId(id.toStdString())) m_id = *parsed;
    auto* layout = new QVBoxLayout(this);

    m_where = new QLabel(this);
    m_where->setWordWrap(true);
    m_where->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_where);

    m_files = new QTreeWidget(this);
    m_files->setRootIsDecorated(false);
    m_files->setHeaderLabels({tr("File"), tr("Size"), tr("State")});
    m_files->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_files->header()->setStretchLastSection(false);
    m_files->setToolTip(tr("Only the files AttnLab reads: the config, the tokenizer and the "
                           "weights. A file already in the cache is linked, not fetched again."));
    layout->addWidget(m_files, 1);

    m_summary = new QLabel(this);
    m_summary->setWordWrap(true);
    layout->addWidget(m_summary);

    m_bar = new QProgressBar(this);
    m_bar->setRange(0, 1000);
    m_bar->setValue(0);
    m_bar->setTextVisible(false);
    layout->addWidget(m_bar);

    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_status);

    auto* buttons = new QDialogButtonBox(this);
    m_download = buttons->addButton(tr("Download"), QDialogButtonBox::AcceptRole);
    m_download->setDefault(true);
    m_download->setEnabled(false);
    m_cancelButton = buttons->addButton(QDialogButtonBox::Cancel);
    m_cancelButton->setToolTip(tr("Stops a download at once; what arrived stays in the cache and "
                                  "the next download resumes there. Closes the dialog otherwise."));
    layout->addWidget(buttons);

    connect(m_download, &QPushButton::clicked, this, [this] {
        if (m_plan)
            download();
        else
            plan();
    });
    connect(m_cancelButton, &QPushButton::clicked, this, &HubDownloadDialog::reject);
    m_downloading.onBusyChanged([this](bool busy) { stopped(busy); });
    m_timer = new QTimer(this);
    m_timer->setInterval(100);
    connect(m_timer, &QTimer::timeout, this, &HubDownloadDialog::showProgress);

    QSize preferred(fontMetrics().averageCharWidth() * 90, fontMetrics().height() * 22);
    if (const QScreen* screen = parent ? parent->screen() : QGuiApplication::primaryScreen())
        preferred = preferred.boundedTo(screen->availableGeometry().size() * 0.9);
    resize(preferred);

    if (m_id.repo.empty()) {
        m_where->setText(tr("'%1' is not a Hub id (ORG/NAME or NAME, with @REVISION if you "
                            "want one).")
                             .arg(id));
        return;
    }
    plan();
}

// The tasks stop their workers and wait for them.
HubDownloadDialog::~HubDownloadDialog() = default;

void HubDownloadDialog::plan() {
    const QString endpoint = text(model::hubEndpoint());
    m_where->setText(
        tr("%1 at revision %2, from %3 into %4")
            .arg(text(m_id.repo), text(m_id.revision), endpoint, text(model::hubCacheRoot())));
    m_status->setText(tr("Asking %1 which files %2 has\u2026").arg(endpoint, text(m_id.repo)));
    m_bar->setRange(0, 0); // busy
    m_download->setEnabled(false);
    m_planning.start([id = m_id](const std::atomic<bool>* cancel) {
        model::HubDownloadOptions options;
        options.progress = [cancel](const model::HubDownloadProgress&) { return !cancel->load(); };
        return model::planHubDownload(id, options);
    });
}

void HubDownloadDialog::download() {
    m_stopping = false;
    m_rate = {};
    m_started = secondsNow();
    {
        std::lock_guard lock(m_shared->mutex);
        m_shared->started = false;
    }
    m_bar->setRange(0, 1000);
    m_bar->setValue(0);
    m_download->setEnabled(false);
    m_status->setText(tr("Starting\u2026"));
    m_downloading.start([plan = *m_plan, shared = m_shared](const std::atomic<bool>* cancel) {
        model::HubDownloadOptions options;
        options.progress = [cancel, shared](const model::HubDownloadProgress& progress) {
            std::lock_guard lock(shared->mutex);
            shared->progress = progress;
            shared->started = true;
            return !cancel->load();
        };
        return model::downloadHubModel(plan, options);
    });
    m_timer->start();
}

void HubDownloadDialog::showProgress() {
    model::HubDownloadProgress progress;
    {
        std::lock_guard lock(m_shared->mutex);
        if (!m_shared->started) return;
        progress = m_shared->progress;
    }
    m_rate.add(secondsNow() - m_started, progress.done);
    if (progress.total > 0)
        m_bar->setValue(static_cast<int>(1000.0 * double(progress.done) / double(progress.total)));
    QString line = tr("%1 (file %2 of %3): %4 of %5")
                       .arg(text(progress.file))
                       .arg(progress.fileIndex + 1)
                       .arg(progress.fileCount)
                       .arg(bytesText(progress.done), bytesText(progress.total));
    if (const double speed = m_rate.bytesPerSecond(); speed > 0)
        line += tr(", %1/s").arg(bytesText(static_cast<std::uint64_t>(speed)));
    if (const double left = m_rate.secondsLeft(progress.total); left >= 0)
        line += tr(", %1 left").arg(text(model::durationText(left)));
    m_status->setText(line);
    // The files before this one are done; this one is arriving.
    for (int i = 0; i < m_files->topLevelItemCount(); ++i) {
        const auto index = static_cast<std::size_t>(i);
        if (index > progress.fileIndex) break;
        QTreeWidgetItem* item = m_files->topLevelItem(i);
        if (index < progress.fileIndex || progress.fileDone == progress.fileBytes)
            item->setText(2, tr("done"));
        else
            item->setText(2, tr("downloading\u2026"));
        if (index == progress.fileIndex) m_files->setCurrentItem(item);
    }
}

void HubDownloadDialog::showPlan() {
    const model::HubDownloadPlan& plan = *m_plan;
    m_where->setText(tr("%1 at revision %2 (commit %3), from %4 into %5")
                         .arg(text(plan.id.repo), text(plan.id.revision),
                              text(plan.commit.substr(0, 12)), text(plan.endpoint),
                              text(plan.cacheRoot)));
    m_files->clear();
    for (const auto& file : plan.files) {
        auto* item =
            new QTreeWidgetItem(m_files, {text(file.name), bytesText(file.bytes),
                                          file.cached ? tr("in the cache") : tr("to download")});
        item->setTextAlignment(1, Qt::AlignRight | Qt::AlignVCenter);
    }
    // Room between the right-aligned sizes and the state, and for every state a file passes
    // through, whatever the theme's font and the language.
    const int gap = 2 * fontMetrics().averageCharWidth();
    m_files->resizeColumnToContents(1);
    m_files->setColumnWidth(1, m_files->columnWidth(1) + gap);
    int state = m_files->header()->sectionSizeHint(2);
    for (const QString& word :
         {tr("in the cache"), tr("to download"), tr("downloading\u2026"), tr("done")})
        state = std::max(state, m_files->fontMetrics().horizontalAdvance(word) + gap);
    m_files->setColumnWidth(2, state);
    m_summary->setText(tr("%1 files, %2 in all; %3 to download.")
                           .arg(plan.files.size())
                           .arg(bytesText(plan.bytes), bytesText(plan.missing)));
}

void HubDownloadDialog::planned(Result<model::HubDownloadPlan> plan) {
    m_bar->setRange(0, 1000);
    m_bar->setValue(0);
    m_download->setEnabled(true);
    if (!plan) {
        failed(text(plan.error()));
        return;
    }
    m_plan = std::move(*plan);
    showPlan();
    m_status->setText(
        m_plan->missing == 0
            ? tr("Every file is in the cache already: Download opens it.")
            : tr("Download fetches %1; Cancel closes.").arg(bytesText(m_plan->missing)));
    m_download->setText(tr("Download"));
    m_download->setFocus();
}

void HubDownloadDialog::downloaded(Result<std::string> folder) {
    m_timer->stop();
    m_download->setEnabled(true);
    if (!folder) {
        failed(text(folder.error()));
        return;
    }
    m_bar->setValue(1000);
    m_folder = text(*folder);
    accept();
}

void HubDownloadDialog::failed(const QString& error) {
    m_bar->setValue(0);
    m_status->setText(tr("Could not download: %1").arg(error));
    // Before the files were listed, Try Again asks the Hub again; after, it downloads again.
    m_download->setText(tr("Try Again"));
}

void HubDownloadDialog::stopped(bool busy) {
    // A stopped download hands nothing over: say here what was kept.
    if (busy || !m_stopping) return;
    m_stopping = false;
    m_timer->stop();
    m_download->setEnabled(true);
    m_status->setText(tr("Stopped. What arrived is kept in the cache; Resume goes on from "
                         "there, Cancel closes."));
    m_download->setText(tr("Resume"));
}

void HubDownloadDialog::reject() {
    if (m_downloading.busy()) {
        // The download stops and the dialog stays to say what was kept (stopped(), once the
        // worker has stopped); the next Cancel closes.
        m_stopping = true;
        m_downloading.stop();
        return;
    }
    m_planning.stop(); // asking the Hub just ends
    QDialog::reject();
}

} // namespace attnlab::ui
