#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>
#include <optional>
#include <vector>

namespace pipewright::gui {

// One finished training step, as `pipewright run --progress json` reports it:
// {"event":"step","step":3,"steps":20,"loss":0.41,"iteration_time_s":0.012}.
struct RunStep {
    int step = 0;   // 1-based
    int steps = 0;  // how many the run makes
    std::optional<double> loss;
    double iteration_time_s = 0;

    bool operator==(const RunStep&) const = default;
};

// A complete line of the run's stderr, understood.
struct RunOutputLine {
    enum class Kind {
        step,     // a step progress event (in `step`)
        event,    // another JSON event, kept as its text (newer CLIs may add some)
        message,  // plain text: notes and errors of the launcher and its ranks
    };
    Kind kind = Kind::message;
    RunStep step;
    QString text;  // the line as written, without its newline
};

// Splits the run's stderr into lines as it arrives (chunks may end inside a
// line) and sorts them into progress and messages. Keeps what a failure
// needs: the plain messages, which carry the launcher's and ranks' reasons.
class RunProgressParser {
  public:
    // The lines completed by `chunk`.
    std::vector<RunOutputLine> feed(const QByteArray& chunk);
    // The last line when the output ended without a newline.
    std::vector<RunOutputLine> finish();

    [[nodiscard]] const std::optional<RunStep>& lastStep() const { return last_step_; }
    [[nodiscard]] const QStringList& messages() const { return messages_; }
    // The message to show when the run fails: its last plain lines (the
    // launcher's reason and the problems it lists), empty when it wrote none.
    [[nodiscard]] QString failureMessage(int maxLines = 12) const;

    // Understands one line (without its newline).
    [[nodiscard]] static RunOutputLine parseLine(const QString& line);

  private:
    void take(const QString& line, std::vector<RunOutputLine>& out);

    QByteArray pending_;
    std::optional<RunStep> last_step_;
    QStringList messages_;
};

// What `pipewright run --json` prints on stdout when the run succeeds.
struct RunSummary {
    QString out_dir;
    QString schedule;
    int steps = 0;
    double iteration_time_s = 0;
    double throughput_samples_per_s = 0;
    double bubble_fraction = 0;
    std::optional<double> first_loss;
    std::optional<double> last_loss;
};

// What `run --json` printed, read by the run records' own reader
// (core/run_records.h); nullopt when `json` is not a whole run summary.
[[nodiscard]] std::optional<RunSummary> parse_run_summary(const QByteArray& json);

}  // namespace pipewright::gui
