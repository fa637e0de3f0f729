// Compares the pictures of docs/images with ones docs/make-screenshots.sh has
// just made (the test docs.screenshots, tests/gui/docs_screenshots_test.sh):
//
//   docs_screenshots_compare [--threshold N] [--tolerance PERCENT]
//                            [--size-only PATTERN]... COMMITTED_DIR FRESH_DIR
//
// For every PNG in either folder: the same size, and at most PERCENT % of its
// pixels differing noticeably (some channel by more than N of 255). Pictures
// matching a --size-only pattern are compared by size alone. A committed
// picture the script did not make this time is listed and not compared (the
// script says why, and fails by itself on a picture it does not know). For
// a drifted picture it writes NAME.diff.png beside the fresh one: the fresh
// picture faded, with the differing pixels in red. Exit status 0 when
// nothing drifted, 1 when something did, 2 on a usage error.
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QImage>
#include <QLocale>
#include <QRegularExpression>
#include <QStringList>
#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace {

struct Difference {
    qint64 pixels = 0;  // noticeably different
    int largest = 0;    // the largest difference in a channel, 0..255
    QRect where;        // the box around the differing pixels
};

int channel_difference(QRgb a, QRgb b) {
    return std::max({std::abs(qRed(a) - qRed(b)), std::abs(qGreen(a) - qGreen(b)),
                     std::abs(qBlue(a) - qBlue(b)), std::abs(qAlpha(a) - qAlpha(b))});
}

// Same-sized pictures in Format_ARGB32; `marks` gets the fresh one faded with
// the differing pixels in red.
Difference compare(const QImage& committed, const QImage& fresh, int threshold, QImage* marks) {
    Difference d;
    *marks = fresh.copy();
    int left = fresh.width(), top = fresh.height(), right = -1, bottom = -1;
    for (int y = 0; y < fresh.height(); ++y) {
        const auto* a = reinterpret_cast<const QRgb*>(committed.constScanLine(y));
        const auto* b = reinterpret_cast<const QRgb*>(fresh.constScanLine(y));
        auto* m = reinterpret_cast<QRgb*>(marks->scanLine(y));
        for (int x = 0; x < fresh.width(); ++x) {
            const int diff = channel_difference(a[x], b[x]);
            d.largest = std::max(d.largest, diff);
            if (diff > threshold) {
                ++d.pixels;
                left = std::min(left, x);
                right = std::max(right, x);
                top = std::min(top, y);
                bottom = std::max(bottom, y);
                m[x] = qRgb(255, 0, 0);
            } else {
                const int grey = 191 + qGray(b[x]) / 4;
                m[x] = qRgb(grey, grey, grey);
            }
        }
    }
    if (right >= 0) {
        d.where = QRect(QPoint(left, top), QPoint(right, bottom));
    }
    return d;
}

QString size_text(const QSize& size) {
    return QStringLiteral("%1x%2").arg(size.width()).arg(size.height());
}

bool matches_any(const QString& name, const QList<QRegularExpression>& patterns) {
    return std::any_of(patterns.begin(), patterns.end(),
                       [&](const QRegularExpression& re) { return re.match(name).hasMatch(); });
}

void say(const QString& text) {
    std::printf("%s\n", qPrintable(text));
}

}  // namespace

int main(int argc, char* argv[]) {
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Compares docs/images with pictures docs/make-screenshots.sh has just made."));
    parser.addHelpOption();
    const QCommandLineOption threshold_option(
        QStringLiteral("threshold"),
        QStringLiteral("A pixel differs when a channel differs by more than N of 255."),
        QStringLiteral("N"), QStringLiteral("16"));
    const QCommandLineOption tolerance_option(
        QStringLiteral("tolerance"),
        QStringLiteral("Share of differing pixels a picture may have, in percent."),
        QStringLiteral("PERCENT"), QStringLiteral("0.1"));
    const QCommandLineOption size_only_option(
        QStringLiteral("size-only"),
        QStringLiteral("Compare pictures whose name matches PATTERN (a wildcard) by size only."),
        QStringLiteral("PATTERN"));
    parser.addOptions({threshold_option, tolerance_option, size_only_option});
    parser.addPositionalArgument(QStringLiteral("COMMITTED_DIR"), QStringLiteral("docs/images"));
    parser.addPositionalArgument(QStringLiteral("FRESH_DIR"),
                                 QStringLiteral("the pictures made now"));
    parser.process(app);

    bool threshold_ok = false;
    bool tolerance_ok = false;
    const int threshold = parser.value(threshold_option).toInt(&threshold_ok);
    const double tolerance = parser.value(tolerance_option).toDouble(&tolerance_ok);
    const QStringList dirs = parser.positionalArguments();
    if (dirs.size() != 2 || !threshold_ok || threshold < 0 || threshold > 255 || !tolerance_ok ||
        tolerance < 0) {
        std::fprintf(stderr, "%s", qPrintable(parser.helpText()));
        return 2;
    }
    QList<QRegularExpression> size_only;
    for (const QString& pattern : parser.values(size_only_option)) {
        size_only << QRegularExpression(QRegularExpression::wildcardToRegularExpression(pattern));
    }
    const QDir committed_dir(dirs[0]);
    const QDir fresh_dir(dirs[1]);
    const QStringList png = {QStringLiteral("*.png")};
    QStringList names = committed_dir.entryList(png, QDir::Files);
    for (const QString& name : fresh_dir.entryList(png, QDir::Files)) {
        if (!name.endsWith(QLatin1String(".diff.png")) && !names.contains(name)) {
            names << name;
        }
    }
    names.sort();

    const QLocale locale(QLocale::English);
    int drifted = 0;
    int compared = 0;
    for (const QString& name : names) {
        const QString committed_path = committed_dir.filePath(name);
        const QString fresh_path = fresh_dir.filePath(name);
        if (!QFile::exists(fresh_path)) {
            say(QStringLiteral("%1: not made this time (the script said why), not compared")
                    .arg(name));
            continue;
        }
        if (!QFile::exists(committed_path)) {
            say(QStringLiteral("DRIFT %1: made by the script but not in %2 (new: %3)")
                    .arg(name, committed_dir.path(), fresh_path));
            ++drifted;
            continue;
        }
        const QImage committed = QImage(committed_path).convertToFormat(QImage::Format_ARGB32);
        const QImage fresh = QImage(fresh_path).convertToFormat(QImage::Format_ARGB32);
        if (committed.isNull() || fresh.isNull()) {
            say(QStringLiteral("DRIFT %1: cannot read %2")
                    .arg(name, committed.isNull() ? committed_path : fresh_path));
            ++drifted;
            continue;
        }
        ++compared;
        if (committed.size() != fresh.size()) {
            say(QStringLiteral("DRIFT %1: %2 now, %3 committed (fresh: %4)")
                    .arg(name, size_text(fresh.size()), size_text(committed.size()), fresh_path));
            ++drifted;
            continue;
        }
        if (matches_any(name, size_only)) {
            say(QStringLiteral("%1: %2, compared by size only").arg(name, size_text(fresh.size())));
            continue;
        }
        QImage marks;
        const Difference d = compare(committed, fresh, threshold, &marks);
        const qint64 total = qint64(fresh.width()) * fresh.height();
        const double percent = 100.0 * double(d.pixels) / double(total);
        const QString summary =
            QStringLiteral("%1: %2 % of %3 pixels differ (%4; largest channel difference %5)")
                .arg(name)
                .arg(percent, 0, 'f', 4)
                .arg(size_text(fresh.size()))
                .arg(locale.toString(d.pixels))
                .arg(d.largest);
        if (percent <= tolerance) {
            say(summary);
            continue;
        }
        ++drifted;
        const QString marks_path = fresh_dir.filePath(
            QString(name).replace(QStringLiteral(".png"), QStringLiteral(".diff.png")));
        marks.save(marks_path, "PNG");
        say(QStringLiteral("DRIFT %1, in the box %2+%3+%4\n      fresh: %5\n      "
                           "differences in red: %6")
                .arg(summary, size_text(d.where.size()))
                .arg(d.where.x())
                .arg(d.where.y())
                .arg(fresh_path, marks_path));
    }
    say(QStringLiteral("%1 pictures compared (a pixel differs when a channel differs by more "
                       "than %2 of 255; a picture may have %3 % such pixels); %4 drifted")
            .arg(compared)
            .arg(threshold)
            .arg(tolerance)
            .arg(drifted));
    return drifted == 0 ? 0 : 1;
}
