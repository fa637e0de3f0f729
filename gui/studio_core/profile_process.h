#pragma once

#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <optional>

#include "studio_core/child_process_group.h"
#include "studio_core/run_progress.h"

namespace pipewright::gui {

// What to measure: `pipewright profile PROJECT --out FILE`.
struct ProfileRequest {
    QString cli;           // the pipewright executable
    QString project_file;  // the project as edited, written for the profile
    QString out_file;      // where the profile goes (written only on success)
    QString device;        // --device: auto, cpu or cuda; the CLI's default when empty
    std::optional<int> repeats;
    std::optional<int> warmup;
};

// How far a profile is: the profiler times every layer in rounds (warm-up
// rounds first), then the transfer between two ranks.
struct ProfileProgress {
    int round = 0;             // 1-based; 0 before the first round
    int rounds = 0;            // warm-up included
    bool transfer = false;     // timing the transfer between two ranks
    bool collectives = false;  // timing the collectives of data parallelism

    bool operator==(const ProfileProgress&) const = default;
};

// Reads one line of the profiler's stderr ("  round 3/12 over the layers",
// "  transfer: ping-pong ..."); nullopt for a line that says nothing of progress.
[[nodiscard]] std::optional<ProfileProgress> parse_profile_progress(const QString& line);

// `pipewright profile` as a child process in its own process group, so that
// Cancel stops the transfer measurement's threads too. A failed or cancelled
// profile leaves the previous profile file as it was: the command line writes
// it atomically at the end.
class ProfileProcess : public QObject {
    Q_OBJECT

  public:
    // A profile still going when this is deleted is stopped and waited for.
    explicit ProfileProcess(QObject* parent = nullptr);

    [[nodiscard]] static QStringList arguments(const ProfileRequest& request);

    // False when a profile is already going.
    bool start(const ProfileRequest& request);
    // SIGTERM, then SIGKILL to the group after a grace period.
    void cancel();

    [[nodiscard]] bool isRunning() const { return child_->isRunning(); }
    [[nodiscard]] const ProfileRequest& request() const { return request_; }
    [[nodiscard]] const ProfileProgress& lastProgress() const { return progress_; }
    // What the profiler warned of ("this machine is busy ..."), without the
    // "pipewright: warning: " in front.
    [[nodiscard]] QStringList warnings() const;

  signals:
    void progress(const pipewright::gui::ProfileProgress& progress);
    // Every line the profiler writes on stderr, for the log.
    void output(const QString& line);
    // Exit code 0: the profile is in request().out_file.
    void succeeded();
    void failed(const QString& message);
    void cancelled();

  private:
    void readStderr();
    void onFinished(int exitCode, QProcess::ExitStatus status, bool wasCancelled);

    ChildProcessGroup* child_;
    ProfileRequest request_;
    RunProgressParser lines_;
    ProfileProgress progress_;
};

}  // namespace pipewright::gui
