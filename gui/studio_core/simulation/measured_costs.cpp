#include "studio_core/simulation/measured_costs.h"

#include <QDir>
#include <QFileInfo>
#include <QLocale>
#include <QObject>
#include <exception>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/file_names.h"
#include "pipewright/sim/profile_coverage.h"

namespace pipewright::gui {

QString profile_path_for(const QString& runs_dir, const QString& model_name) {
    const QString stem = QString::fromStdString(safe_file_stem(model_name.toStdString()));
    return QDir(runs_dir).filePath(stem + QStringLiteral(".profile.json"));
}

std::optional<MeasuredCosts> load_measured_costs(const QString& path, QString* error) {
    error->clear();
    const QFileInfo file(path);
    if (!file.exists()) {
        return std::nullopt;
    }
    try {
        MeasuredCosts costs;
        costs.path = file.absoluteFilePath();
        costs.profile = std::make_shared<const Profile>(load_profile_file(path.toStdString()));
        costs.measured = file.lastModified();
        return costs;
    } catch (const InputError& e) {
        QStringList problems;
        for (const auto& d : e.diagnostics().items()) {
            problems << QString::fromStdString(d.path.empty() ? d.message
                                                              : d.path + ": " + d.message);
        }
        *error = QObject::tr("The profile %1 does not read: %2")
                     .arg(QDir::toNativeSeparators(path), problems.join(QStringLiteral("; ")));
    } catch (const std::exception& e) {
        *error = QObject::tr("The profile %1 does not read: %2")
                     .arg(QDir::toNativeSeparators(path), QString::fromStdString(e.what()));
    }
    return std::nullopt;
}

QString describe_measured_costs(const MeasuredCosts& costs, const Model& model, int ranks) {
    const Profile& p = *costs.profile;
    const ProfileCoverage coverage = profile_coverage(p, model);
    const QString host = p.machine.host.empty() ? QObject::tr("this machine")
                                                : QString::fromStdString(p.machine.host);
    const std::vector<int> sizes = p.measured_sizes();
    QStringList size_words;
    for (const int size : sizes) {
        size_words << QLocale().toString(size);
    }
    const QString size_list =
        size_words.size() == 1
            ? size_words.front()
            : QObject::tr("%1 and %2")
                  .arg(size_words.mid(0, size_words.size() - 1).join(QStringLiteral(", ")),
                       size_words.back());
    QString text =
        (sizes.size() == 1 ? QObject::tr("Measured on %1 (%2) at micro-batch size %3, %4: %5.")
                           : QObject::tr("Measured on %1 (%2) at micro-batch sizes %3, %4: %5."))
            .arg(host, QString::fromStdString(p.device_name))
            .arg(size_list)
            .arg(QLocale().toString(costs.measured, QLocale::ShortFormat))
            .arg(QString::fromStdString(describe_cost_sources(coverage)));
    std::vector<std::string> warnings = profile_warnings(coverage);
    if (auto shared = profile_oversubscription_warning(p, ranks)) {
        warnings.push_back(std::move(*shared));
    }
    for (const std::string& warning : warnings) {
        QString sentence = QString::fromStdString(warning);
        sentence[0] = sentence[0].toUpper();
        if (!sentence.endsWith(QLatin1Char('?')) && !sentence.endsWith(QLatin1Char('.'))) {
            sentence += QLatin1Char('.');
        }
        text += QLatin1Char(' ') + sentence;
    }
    return text;
}

bool measured_costs_fit(const MeasuredCosts& costs, const Model& model) {
    return !profile_coverage(*costs.profile, model).matches_none();
}

}  // namespace pipewright::gui
