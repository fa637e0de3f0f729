#pragma once

#include <QTranslator>

namespace pipewright::gui {

// The studio's messages are written once, in English, with the plural ending
// in brackets: tr("%n layer(s) on %1", nullptr, n), "%n micro-batch(es)".
// Without a translator Qt shows them as written ("1 layer(s)"); this one,
// installed on the application, picks the ending for `n` ("1 layer",
// "2 micro-batches"), which is what an English translation file would do,
// without a translation build step.
class EnglishPlurals : public QTranslator {
  public:
    using QTranslator::QTranslator;

    [[nodiscard]] QString translate(const char* context, const char* sourceText,
                                    const char* disambiguation = nullptr,
                                    int n = -1) const override;
    [[nodiscard]] bool isEmpty() const override { return false; }

    // "layer(s)" → "layer" for 1, "layers" otherwise; text without brackets
    // is returned as it is.
    [[nodiscard]] static QString choose(const QString& text, int n);
};

}  // namespace pipewright::gui
