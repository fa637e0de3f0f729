#include "studio_core/processes/run_progress.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "pipewright/core/json_parse.h"
#include "pipewright/core/run_records.h"

namespace pipewright::gui {

namespace {

// A loss: a number, or a non-finite one by name ("NaN", "Infinity").
std::optional<double> number_or_null(const QJsonValue& v) {
    if (v.isString()) {
        return loss_from_json(nlohmann::json(v.toString().toStdString()));
    }
    return v.isDouble() ? std::optional<double>(v.toDouble()) : std::nullopt;
}

}  // namespace

RunOutputLine RunProgressParser::parseLine(const QString& line) {
    RunOutputLine out;
    out.text = line;
    const QString trimmed = line.trimmed();
    if (!trimmed.startsWith(QLatin1Char('{'))) {
        return out;
    }
    QJsonParseError error{};
    const QJsonDocument doc = QJsonDocument::fromJson(trimmed.toUtf8(), &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject()) {
        return out;  // braces in a plain message
    }
    const QJsonObject o = doc.object();
    if (!o.contains(QLatin1String("event"))) {
        return out;
    }
    out.kind = RunOutputLine::Kind::event;
    if (o.value(QLatin1String("event")).toString() == QLatin1String("step") &&
        o.value(QLatin1String("step")).isDouble() && o.value(QLatin1String("steps")).isDouble()) {
        out.kind = RunOutputLine::Kind::step;
        out.step.step = o.value(QLatin1String("step")).toInt();
        out.step.steps = o.value(QLatin1String("steps")).toInt();
        out.step.loss = number_or_null(o.value(QLatin1String("loss")));
        out.step.iteration_time_s = o.value(QLatin1String("iteration_time_s")).toDouble();
    }
    return out;
}

void RunProgressParser::take(const QString& line, std::vector<RunOutputLine>& out) {
    if (line.trimmed().isEmpty()) {
        return;
    }
    RunOutputLine parsed = parseLine(line);
    if (parsed.kind == RunOutputLine::Kind::step) {
        last_step_ = parsed.step;
    } else if (parsed.kind == RunOutputLine::Kind::message) {
        messages_ << parsed.text;
    }
    out.push_back(std::move(parsed));
}

std::vector<RunOutputLine> RunProgressParser::feed(const QByteArray& chunk) {
    pending_ += chunk;
    std::vector<RunOutputLine> out;
    qsizetype newline = -1;
    while ((newline = pending_.indexOf('\n')) >= 0) {
        QByteArray line = pending_.left(newline);
        pending_.remove(0, newline + 1);
        if (line.endsWith('\r')) {
            line.chop(1);
        }
        take(QString::fromUtf8(line), out);
    }
    return out;
}

std::vector<RunOutputLine> RunProgressParser::finish() {
    std::vector<RunOutputLine> out;
    if (!pending_.isEmpty()) {
        take(QString::fromUtf8(pending_), out);
        pending_.clear();
    }
    return out;
}

QString RunProgressParser::failureMessage(int maxLines) const {
    const qsizetype first = std::max<qsizetype>(0, messages_.size() - maxLines);
    return messages_.mid(first).join(QLatin1Char('\n'));
}

std::optional<RunSummary> parse_run_summary(const QByteArray& json) {
    const ParsedJson parsed = parse_json(json.trimmed().toStdString());
    if (!parsed.value) {
        return std::nullopt;
    }
    Diagnostics problems;
    const auto read = pipewright::read_run_summary(*parsed.value, problems);
    if (!read || !parsed.problems.empty()) {
        return std::nullopt;
    }
    RunSummary s;
    s.out_dir = QString::fromStdString(read->out_dir);
    s.schedule = QString::fromStdString(read->schedule);
    s.steps = read->steps;
    s.iteration_time_s = read->iteration_time_s;
    s.throughput_samples_per_s = read->throughput_samples_per_s;
    s.bubble_fraction = read->bubble_fraction;
    if (!read->losses.empty()) {
        s.first_loss = read->losses.front();
        s.last_loss = read->losses.back();
    }
    return s;
}

}  // namespace pipewright::gui
