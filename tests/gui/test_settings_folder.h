#pragma once
// ctest runs test programs side by side, and Qt's test mode gives all of
// them one settings file: a test that clears a setting would clear it under
// another's feet. While alive, this program keeps its settings in a
// temporary folder of its own.
#include <QSettings>
#include <QTemporaryDir>
#include <QtGlobal>

namespace pipewright::gui::test {

class TestSettingsFolder {
  public:
    TestSettingsFolder() {
        if (!folder_.isValid()) {
            qFatal("cannot make a folder for the tests' settings: %s",
                   qPrintable(folder_.errorString()));
        }
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, folder_.path());
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, folder_.path());
    }

  private:
    QTemporaryDir folder_;
};

}  // namespace pipewright::gui::test
