#include "run/costs_bar.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QStandardItemModel>
#include <QVBoxLayout>

namespace pipewright::gui {

namespace {
constexpr int kAnalytic = 0;
constexpr int kMeasured = 1;
}  // namespace

CostsBar::CostsBar(QWidget* parent) : QWidget(parent), process_(new ProfileProcess(this)) {
    setObjectName(QStringLiteral("costsBar"));
    costs_combo_ = new QComboBox(this);
    costs_combo_->setObjectName(QStringLiteral("costsCombo"));
    costs_combo_->addItem(tr("Analytic estimate"));
    costs_combo_->addItem(tr("Measured profile"));
    costs_combo_->setToolTip(
        tr("Analytic estimate: each layer as the kernels it launches (GEMMs, attention, "
           "memory-bound kernels), priced from the devices' SMs, peaks and bandwidths.\n"
           "Measured profile: each layer's forward and backward, and the transfers, as timed on "
           "this machine by Profile this machine (pipewright profile)."));
    profile_ = new QPushButton(tr("Profile this machine"), this);
    profile_->setObjectName(QStringLiteral("profileButton"));
    cancel_ = new QPushButton(tr("Cancel"), this);
    cancel_->setObjectName(QStringLiteral("cancelProfileButton"));
    cancel_->setToolTip(tr("Stop measuring; the profile kept so far stays as it was"));
    description_ = new QLabel(this);
    description_->setObjectName(QStringLiteral("costsDescription"));
    description_->setWordWrap(true);
    description_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* row = new QHBoxLayout;
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(new QLabel(tr("Costs"), this));
    row->addWidget(costs_combo_);
    row->addWidget(profile_);
    row->addWidget(cancel_);
    row->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(row);
    layout->addWidget(description_);

    connect(costs_combo_, &QComboBox::currentIndexChanged, this, [this](int index) {
        updateControls();
        emit useMeasuredChanged(index == kMeasured);
    });
    connect(profile_, &QPushButton::clicked, this, &CostsBar::profileRequested);
    connect(cancel_, &QPushButton::clicked, this, &CostsBar::cancelProfile);
    connect(process_, &ProfileProcess::progress, this, &CostsBar::profileProgress);
    connect(process_, &ProfileProcess::output, this, &CostsBar::profileOutput);
    auto ended = [this] {
        updateControls();
        emit profilingChanged(false);
    };
    connect(process_, &ProfileProcess::succeeded, this, [this, ended] {
        ended();
        emit profileSucceeded(process_->request().out_file);
    });
    connect(process_, &ProfileProcess::failed, this, [this, ended](const QString& message) {
        ended();
        emit profileFailed(message);
    });
    connect(process_, &ProfileProcess::cancelled, this, [this, ended] {
        ended();
        emit profileCancelled();
    });
    setMeasuredCosts(std::nullopt, {});
}

void CostsBar::setCli(const CliLocation& cli) {
    cli_ = cli;
    updateControls();
}

void CostsBar::setMeasuredCosts(const std::optional<MeasuredCosts>& costs,
                                const QString& description, const QString& problem) {
    costs_ = costs;
    if (!costs_) {
        const QSignalBlocker quiet(costs_combo_);
        costs_combo_->setCurrentIndex(kAnalytic);
    }
    QString text = costs_
                       ? description
                       : tr("No profile of this project on this machine yet: the simulation "
                            "prices each layer as the kernels it launches on the devices' figures. "
                            "Profile this machine to time "
                            "every layer and the transfers for real (a few seconds for small "
                            "models).");
    if (!problem.isEmpty()) {
        text = problem + QLatin1Char(' ') + text;
    }
    description_->setText(text);
    updateControls();
}

bool CostsBar::useMeasured() const {
    return costs_.has_value() && costs_combo_->currentIndex() == kMeasured;
}

void CostsBar::setUseMeasured(bool measured) {
    costs_combo_->setCurrentIndex(measured && costs_ ? kMeasured : kAnalytic);
}

void CostsBar::startProfile(const ProfileRequest& request) {
    if (process_->isRunning()) {
        return;
    }
    process_->start(request);
    updateControls();
    emit profileStarted();
    emit profilingChanged(true);
}

void CostsBar::cancelProfile() {
    process_->cancel();
    updateControls();
}

bool CostsBar::isProfiling() const {
    return process_->isRunning();
}

void CostsBar::setOtherWorkRunning(bool running) {
    other_work_ = running;
    updateControls();
}

QString CostsBar::descriptionText() const {
    return description_->text();
}

void CostsBar::updateControls() {
    const bool profiling = process_->isRunning();
    profile_->setEnabled(cli_.found() && !profiling && !other_work_);
    profile_->setToolTip(
        !cli_.found() ? cli_.reason
        : other_work_
            ? tr("A run is training: profile when it has finished, or the timings would share "
                 "the cores with it")
            : tr("Time every layer's forward and backward and a transfer between two ranks on "
                 "this machine, at the project's micro-batch size (pipewright profile)"));
    cancel_->setVisible(profiling);
    costs_combo_->setEnabled(!profiling);
    // The measured entry is there only when there is a profile to use.
    if (auto* model = qobject_cast<QStandardItemModel*>(costs_combo_->model())) {
        if (QStandardItem* item = model->item(kMeasured)) {
            item->setEnabled(costs_.has_value());
        }
    }
}

}  // namespace pipewright::gui
