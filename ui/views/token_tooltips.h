#pragma once
/// Tokens on hover, the same way in every view: a label shows the token as people read it
/// (displayToken: "Ġthe" reads " the"), and hovering it shows that and the raw token with its
/// byte-level or sentencepiece marker and, when known, its id. tokenTooltip() is the text;
/// TokenTooltips puts it on the token axes of a QCustomPlot (over a tick label, or over the
/// plot at that token's position) without each view writing its own.

#include <QObject>
#include <QPointer>
#include <QString>

#include <cstdint>
#include <string>
#include <vector>

class QCustomPlot;
class QCPAxis;

namespace attnlab::ui {

/// "“ the” — raw token “Ġthe”, id 262": the token as shown, then the raw form when it
/// differs (or always, with `id` >= 0, so the id is given), then the id when `id` >= 0.
QString tokenTooltip(const std::string& raw, std::int64_t id = -1);

/// Token tooltips for the token axes of one QCustomPlot (an event filter on it).
class TokenTooltips : public QObject {
    Q_OBJECT
public:
    /// The plot's token tooltips, made and installed the first time.
    static TokenTooltips* of(QCustomPlot* plot);
    /// Axis `axis` shows token i at coordinate i: `raw` are the raw tokens, `ids` their ids
    /// (empty when unknown). `role` names it in the text over the plot ("query", "key");
    /// `overPlot` false: only over the tick labels (a view with its own tooltip in the plot).
    /// `firstCoordinate`: token i sits at firstCoordinate + i (a ranked list starting at 1).
    void setTokens(QCPAxis* axis, const std::vector<std::string>& raw,
                   const std::vector<std::int64_t>& ids = {}, const QString& role = {},
                   bool overPlot = true, double firstCoordinate = 0);
    /// Forgets every axis (a view that rebuilds its axes calls it first).
    void clear();
    /// The tooltip at `pos` (plot pixels): a token axis's tick label under it, or inside an
    /// axis rect the tokens at that position; empty when no token is there.
    QString textAt(const QPoint& pos) const;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    explicit TokenTooltips(QCustomPlot* plot);
    struct Entry {
        QPointer<QCPAxis> axis;
        std::vector<std::string> raw;
        std::vector<std::int64_t> ids;
        QString role;
        bool overPlot = true;
        double firstCoordinate = 0;
    };
    /// The token of `entry` at pixel coordinate `pixel` along its axis, or -1.
    static int tokenAt(const Entry& entry, double pixel);
    QCustomPlot* m_plot;
    std::vector<Entry> m_entries;
};

} // namespace attnlab::ui
