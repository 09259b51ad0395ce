#pragma once
/// Download a model from the Hugging Face Hub (or the mirror HF_ENDPOINT names) into the cache
/// huggingface_hub reads (model/hub_download.h). The dialog first asks the Hub what the model
/// has and lists the files AttnLab reads with their sizes — which are already in the cache and
/// how much is left to fetch — then Download fetches them with a progress bar, the speed and
/// the time left. Cancel stops at once and keeps what arrived: Download again resumes there.
/// A refusal (no such model, a gated one, no network) is said in the dialog; nothing is lost.
///
///   HubDownloadDialog dialog("openai-community/gpt2", window);
///   if (dialog.exec() == QDialog::Accepted) models->openModel(dialog.folder());

#include <QDialog>
#include <QString>

#include <memory>
#include <mutex>
#include <optional>

#include "attnlab/model/hub_download.h"
#include "ui/state/latest_task.h"

class QLabel;
class QProgressBar;
class QPushButton;
class QTimer;
class QTreeWidget;

namespace attnlab::ui {

class HubDownloadDialog : public QDialog {
    Q_OBJECT
public:
    /// `id`: ORG/NAME[@REVISION]. Asking the Hub starts at once.
    explicit HubDownloadDialog(const QString& id, QWidget* parent = nullptr);
    ~HubDownloadDialog() override;

    /// The snapshot folder, once accepted.
    QString folder() const { return m_folder; }

    QTreeWidget* files() const { return m_files; }
    QLabel* summary() const { return m_summary; }
    QLabel* status() const { return m_status; }
    QProgressBar* bar() const { return m_bar; }
    QPushButton* downloadButton() const { return m_download; }
    /// Whether the Hub is being asked or a download is running.
    bool busy() const { return m_planning.busy() || m_downloading.busy(); }

    void reject() override;

private:
    /// The download's latest progress, written by the worker, read by the window's timer.
    struct Shared {
        std::mutex mutex;
        model::HubDownloadProgress progress;
        bool started = false;
    };

    void plan();
    void download();
    void planned(Result<model::HubDownloadPlan> plan);
    void downloaded(Result<std::string> folder);
    void failed(const QString& error);
    void stopped(bool busy);
    void showProgress();
    void showPlan();

    model::HubId m_id;
    std::optional<model::HubDownloadPlan> m_plan;
    std::shared_ptr<Shared> m_shared = std::make_shared<Shared>();
    LatestTask<model::HubDownloadPlan> m_planning;
    LatestTask<std::string> m_downloading;
    bool m_stopping = false;
    model::DownloadRate m_rate;
    double m_started = 0;
    QString m_folder;

    QLabel* m_where = nullptr;
    QTreeWidget* m_files = nullptr;
    QLabel* m_summary = nullptr;
    QProgressBar* m_bar = nullptr;
    QLabel* m_status = nullptr;
    QPushButton* m_download = nullptr;
    QPushButton* m_cancelButton = nullptr;
    QTimer* m_timer = nullptr;
};

} // namespace attnlab::ui
