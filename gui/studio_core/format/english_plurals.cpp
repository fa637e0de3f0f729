#include "studio_core/format/english_plurals.h"

#include <QRegularExpression>

namespace pipewright::gui {

QString EnglishPlurals::choose(const QString& text, int n) {
    static const QRegularExpression ending(QStringLiteral(R"((\w)\((s|es)\))"));
    QString out = text;
    out.replace(ending, n == 1 ? QStringLiteral("\\1") : QStringLiteral("\\1\\2"));
    return out;
}

QString EnglishPlurals::translate(const char* /*context*/, const char* sourceText,
                                  const char* /*disambiguation*/, int n) const {
    if (n < 0 || sourceText == nullptr) {
        return {};  // not a plural: Qt shows the source text
    }
    const QString source = QString::fromUtf8(sourceText);
    const QString chosen = choose(source, n);
    return chosen == source ? QString() : chosen;
}

}  // namespace pipewright::gui
