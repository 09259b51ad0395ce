#include "ui/view_registry.h"

#include "ui/aggregate_view.h"
#include "ui/compare_view.h"
#include "ui/complexity_view.h"
#include "ui/difference_view.h"
#include "ui/entropy_view.h"
#include "ui/flash_stepper_view.h"
#include "ui/head_stats_view.h"
#include "ui/heads_grid_view.h"
#include "ui/heatmap_view.h"
#include "ui/kv_cache_view.h"
#include "ui/lines_view.h"
#include "ui/model_document.h"
#include "ui/model_view.h"
#include "ui/model_views_binding.h"
#include "ui/output_projection_view.h"
#include "ui/rope_view.h"
#include "ui/statistics_view.h"

namespace attnlab::ui {

const std::vector<ViewEntry>& viewRegistry() {
    static const std::vector<ViewEntry> entries = {
        {QStringLiteral("heatmap"),
         [](Document* d, QWidget* p) -> View* {
             return new HeatmapView(d, HeatmapSource::Primary, p);
         }},
        {QStringLiteral("heads"),
         [](Document* d, QWidget* p) -> View* { return new HeadsGridView(d, p); }},
        {QStringLiteral("entropy"),
         [](Document* d, QWidget* p) -> View* { return new EntropyView(d, p); }},
        {QStringLiteral("statistics"),
         [](Document* d, QWidget* p) -> View* { return new StatisticsView(d, p); }},
        {QStringLiteral("compare"),
         [](Document* d, QWidget* p) -> View* { return new CompareView(d, p); }},
        {QStringLiteral("flash"),
         [](Document* d, QWidget* p) -> View* { return new FlashStepperView(d, p); }},
        {QStringLiteral("kv-cache"),
         [](Document* d, QWidget* p) -> View* { return new KvCacheView(d, p); }},
        {QStringLiteral("rope"),
         [](Document* d, QWidget* p) -> View* { return new RopeView(d, p); }},
        {QStringLiteral("complexity"),
         [](Document* d, QWidget* p) -> View* { return new ComplexityView(d, p); }},
        {QStringLiteral("lines"),
         [](Document* d, QWidget* p) -> View* { return new LinesView(d, p); }},
        // Seed 000 §4.2's last step: Concat(heads) W^O.
        {QStringLiteral("output-projection"),
         [](Document* d, QWidget* p) -> View* { return new OutputProjectionView(d, p); }},
        // Model dumps (File > Open Attention Dump...): every layer and head of a real model.
        {QStringLiteral("model"),
         [](Document* d, QWidget* p) -> View* { return new ModelView(d, p); }},
        {QStringLiteral("aggregate"),
         [](Document* d, QWidget* p) -> View* { return new AggregateView(d, p); }},
        {QStringLiteral("head-stats"),
         [](Document* d, QWidget* p) -> View* { return new HeadStatsView(d, p); }},
        {QStringLiteral("dump-difference"),
         [](Document* d, QWidget* p) -> View* { return new DifferenceView(d, p); }},
        // A real model (File > Open Model...): what it predicts next, and what its heads do.
        {QStringLiteral("next-token"),
         [](Document* d, QWidget* p) -> View* {
             auto* view = new NextTokenView(d, p);
             bindNextTokenView(view, ModelDocument::of(d));
             return view;
         }},
        {QStringLiteral("head-roles"),
         [](Document* d, QWidget* p) -> View* {
             auto* view = new HeadRolesView(d, p);
             bindHeadRolesView(view, ModelDocument::of(d));
             return view;
         }},
    };
    return entries;
}

QStringList viewIds() {
    QStringList ids;
    for (const ViewEntry& entry : viewRegistry())
        ids << entry.id;
    return ids;
}

View* createView(const QString& id, Document* document, QWidget* parent) {
    for (const ViewEntry& entry : viewRegistry())
        if (entry.id == id) return entry.create(document, parent);
    return nullptr;
}

} // namespace attnlab::ui
