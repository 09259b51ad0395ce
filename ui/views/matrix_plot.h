#pragma once
/// MatrixPlot: draws one labelled matrix (queries down, keys across) into a QCustomPlot with a
/// colour bar and a title; shared by the aggregate and difference views of model dumps.

#include <QString>
#include <QStringList>

#include <string>
#include <vector>

#include "attnlab/attention/attention.h"
#include "attnlab/attention/mask.h"
#include "attnlab/base/result.h"
#include "attnlab/base/tensor.h"
#include "attnlab/io/npy.h"
#include "attnlab/lab/embedding.h"
#include "attnlab/lab/session.h"
#include "attnlab/lab/stats.h"
#include "ui/views/view.h"
#include "ui/widgets/theme.h"

class QCustomPlot;
class QCPColorMap;
class QCPColorScale;
class QCPTextElement;

namespace attnlab::ui {

/// A matrix with what is needed to label it.
struct MatrixFigure {
    MatrixD values;
    QStringList rowLabels;
    QStringList columnLabels;
    /// The raw tokens behind the labels (hover shows them); empty when there are none.
    std::vector<std::string> rawRows, rawColumns;
    QString title;
    QString quantity;          ///< colour-bar label
    bool signedValues = false; ///< diverging map, range symmetric about 0
};

/// The figure's numbers as a DataTable (CSV/NPY export).
DataTable tableOf(const MatrixFigure& figure);

class MatrixPlot {
public:
    /// Sets up `plot` (owned by the caller) with a colour map, a colour scale and a title.
    explicit MatrixPlot(QCustomPlot* plot);
    /// Redraws with `figure`; an empty matrix shows only the title.
    void show(const MatrixFigure& figure, const Theme& theme, const QString& colormap);

private:
    QCustomPlot* m_plot;
    QCPColorMap* m_map;
    QCPColorScale* m_scale;
    QCPTextElement* m_title;
};

} // namespace attnlab::ui
