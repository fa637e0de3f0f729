// Prints the MIME type Qt gives each file named on the command line, one per
// line, the way the studio and KDE file managers see it. Used by
// package_test.sh to check the installed shared-mime-info XML: set
// XDG_DATA_DIRS to the unpacked share/ folder first.
#include <QCoreApplication>
#include <QMimeDatabase>
#include <QStringList>
#include <cstdio>

int main(int argc, char* argv[]) {
    QCoreApplication app(argc, argv);
    const QStringList files = QCoreApplication::arguments().mid(1);
    if (files.isEmpty()) {
        std::fprintf(stderr, "usage: mime_probe FILE...\n");
        return 2;
    }
    const QMimeDatabase db;
    for (const QString& file : files) {
        std::printf("%s\n", qPrintable(db.mimeTypeForFile(file).name()));
    }
    return 0;
}
