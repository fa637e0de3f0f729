#pragma once

#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <algorithm>
#include <optional>

#include "studio_core/processes/cli_process.h"
#include "studio_core/processes/run_progress.h"

namespace pipewright::gui {

// What to measure: `pipewright profile PROJECT --out FILE --progress json`.
struct ProfileRequest {
    QString cli;           // the pipewright executable
    QString project_file;  // the project as edited, written for the profile
    QString out_file;      // where the profile goes (written only on success)
    QString device;        // --device: auto, cpu or cuda; the CLI's default when empty
    std::optional<int> repeats;
    std::optional<int> warmup;
};

// How far a profile is: the profiler times every layer in rounds (warm-up
// rounds first), at each micro-batch size in turn, then the transfer
// between two ranks and the collectives.
struct ProfileProgress {
    int round = 0;   // 1-based; 0 before the first round
    int rounds = 0;  // per size, warm-up included
    int size = 0;    // 1-based: which of `sizes` micro-batch sizes
    int sizes = 0;
    bool transfer = false;     // timing the transfer between two ranks
    bool collectives = false;  // timing the collectives of data parallelism

    // Rounds done and in all, over every size.
    [[nodiscard]] int done() const { return std::max(0, size - 1) * rounds + round; }
    [[nodiscard]] int total() const { return std::max(1, sizes) * rounds; }

    bool operator==(const ProfileProgress&) const = default;
};

// Reads one progress event of `profile --progress json`
// ({"event":"profile","phase":"layers","size":1,"sizes":3,"round":3,"rounds":12},
// phases "transfer" and "collectives"); nullopt for any other line.
[[nodiscard]] std::optional<ProfileProgress> parse_profile_event(const QString& line);

// `pipewright profile` as a child process in its own process group, so that
// Cancel stops the transfer measurement's threads too (CliProcess). A failed
// or cancelled profile leaves the previous profile file as it was: the
// command line writes it atomically at the end.
class ProfileProcess : public CliProcess {
    Q_OBJECT

  public:
    explicit ProfileProcess(QObject* parent = nullptr);

    [[nodiscard]] static QStringList arguments(const ProfileRequest& request);

    // False when a profile is already going.
    bool start(const ProfileRequest& request);

    [[nodiscard]] const ProfileRequest& request() const { return request_; }
    [[nodiscard]] const ProfileProgress& lastProgress() const { return progress_; }
    // What the profiler warned of ("this machine is busy ..."), without the
    // "pipewright: warning: " in front.
    [[nodiscard]] QStringList warnings() const;

  signals:
    void progress(const pipewright::gui::ProfileProgress& progress);
    // Every line the profiler writes on stderr, for the log.
    void output(const QString& line);

  protected:
    void lineRead(const RunOutputLine& line) override;
    void exited(int exitCode, QProcess::ExitStatus status) override;

  private:
    ProfileRequest request_;
    ProfileProgress progress_;
};

}  // namespace pipewright::gui
