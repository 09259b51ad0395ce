#include "ui/views/view_registry.h"

#include <QCoreApplication>

#include "ui/state/model_document.h"
#include "ui/views/aggregate_view.h"
#include "ui/views/compare_view.h"
#include "ui/views/complexity_view.h"
#include "ui/views/difference_view.h"
#include "ui/views/entropy_view.h"
#include "ui/views/fill_mask_view.h"
#include "ui/views/flash_stepper_view.h"
#include "ui/views/head_stats_view.h"
#include "ui/views/heads_grid_view.h"
#include "ui/views/heatmap_view.h"
#include "ui/views/image_attention_view.h"
#include "ui/views/kv_cache_view.h"
#include "ui/views/lens_views.h"
#include "ui/views/lines_view.h"
#include "ui/views/model_view.h"
#include "ui/views/model_views_binding.h"
#include "ui/views/output_projection_view.h"
#include "ui/views/rope_view.h"
#include "ui/views/statistics_view.h"
#include "ui/views/translation_view.h"

namespace attnlab::ui {

namespace {
const char* const kGroupContext = "attnlab::ui::ViewGroups";
} // namespace

const std::vector<ViewGroup>& viewGroups() {
    // Reading the weights; the computation around them, one step at a time; a real model's
    // attention (a dump or a model folder); what an open model predicts and why. A class sees
    // one group's tabs at a time.
    static const std::vector<ViewGroup> groups = {
        {QStringLiteral("attention"), QT_TRANSLATE_NOOP("attnlab::ui::ViewGroups", "Attention"),
         QT_TRANSLATE_NOOP("attnlab::ui::ViewGroups", "The attention weights, read several ways")},
        {QStringLiteral("steps"), QT_TRANSLATE_NOOP("attnlab::ui::ViewGroups", "Step through"),
         QT_TRANSLATE_NOOP("attnlab::ui::ViewGroups",
                           "The computation around the weights, one step at a time")},
        {QStringLiteral("model"), QT_TRANSLATE_NOOP("attnlab::ui::ViewGroups", "Real model"),
         QT_TRANSLATE_NOOP("attnlab::ui::ViewGroups",
                           "A real model's attention: open a model or an attention dump "
                           "(File menu)")},
        {QStringLiteral("probe"), QT_TRANSLATE_NOOP("attnlab::ui::ViewGroups", "Probe the model"),
         QT_TRANSLATE_NOOP("attnlab::ui::ViewGroups",
                           "What an open model predicts, and which heads produce it: open a "
                           "model (File menu)")},
    };
    return groups;
}

QStringList viewGroupIds() {
    QStringList ids;
    for (const ViewGroup& group : viewGroups())
        ids << group.id;
    return ids;
}

QString viewGroupTitle(const QString& groupId) {
    for (const ViewGroup& group : viewGroups())
        if (group.id == groupId) return QCoreApplication::translate(kGroupContext, group.title);
    return {};
}

QString viewGroupDescription(const QString& groupId) {
    for (const ViewGroup& group : viewGroups())
        if (group.id == groupId)
            return QCoreApplication::translate(kGroupContext, group.description);
    return {};
}

QStringList viewIdsInGroup(const QString& groupId) {
    QStringList ids;
    for (const ViewEntry& entry : viewRegistry())
        if (entry.group == groupId) ids << entry.id;
    return ids;
}

QString viewGroupOf(const QString& viewId) {
    for (const ViewEntry& entry : viewRegistry())
        if (entry.id == viewId) return entry.group;
    return {};
}

const std::vector<ViewEntry>& viewRegistry() {
    const QString attention = QStringLiteral("attention");
    const QString steps = QStringLiteral("steps");
    const QString model = QStringLiteral("model");
    const QString probe = QStringLiteral("probe");
    static const std::vector<ViewEntry> entries = {
        // Attention: the weights, read several ways.
        {QStringLiteral("heatmap"), attention,
         [](Document* d, QWidget* p) -> View* {
             return new HeatmapView(d, HeatmapSource::Primary, p);
         }},
        {QStringLiteral("heads"), attention,
         [](Document* d, QWidget* p) -> View* { return new HeadsGridView(d, p); }},
        {QStringLiteral("lines"), attention,
         [](Document* d, QWidget* p) -> View* { return new LinesView(d, p); }},
        {QStringLiteral("entropy"), attention,
         [](Document* d, QWidget* p) -> View* { return new EntropyView(d, p); }},
        {QStringLiteral("statistics"), attention,
         [](Document* d, QWidget* p) -> View* { return new StatisticsView(d, p); }},
        {QStringLiteral("compare"), attention,
         [](Document* d, QWidget* p) -> View* { return new CompareView(d, p); }},
        // Step through: the computation around the weights, in the order it happens.
        {QStringLiteral("rope"), steps,
         [](Document* d, QWidget* p) -> View* { return new RopeView(d, p); }},
        {QStringLiteral("flash"), steps,
         [](Document* d, QWidget* p) -> View* { return new FlashStepperView(d, p); }},
        // Seed 000 §4.2's last step: Concat(heads) W^O, a step of the computation (it shows
        // the heads' outputs and the projection, not the weights).
        {QStringLiteral("output-projection"), steps,
         [](Document* d, QWidget* p) -> View* { return new OutputProjectionView(d, p); }},
        {QStringLiteral("kv-cache"), steps,
         [](Document* d, QWidget* p) -> View* { return new KvCacheView(d, p); }},
        {QStringLiteral("complexity"), steps,
         [](Document* d, QWidget* p) -> View* { return new ComplexityView(d, p); }},
        // Real model. Model dumps (File > Open Attention Dump...): every layer and head.
        {QStringLiteral("model"), model,
         [](Document* d, QWidget* p) -> View* { return new ModelView(d, p); }},
        {QStringLiteral("aggregate"), model,
         [](Document* d, QWidget* p) -> View* { return new AggregateView(d, p); }},
        {QStringLiteral("head-stats"), model,
         [](Document* d, QWidget* p) -> View* { return new HeadStatsView(d, p); }},
        {QStringLiteral("dump-difference"), model,
         [](Document* d, QWidget* p) -> View* { return new DifferenceView(d, p); }},
        // An image classifier's attention on its image.
        {QStringLiteral("image-attention"), model,
         [](Document* d, QWidget* p) -> View* { return new ImageAttentionView(d, p); }},
        // A real model (File > Open Model...): what it predicts next, and what its heads do.
        {QStringLiteral("next-token"), probe,
         [](Document* d, QWidget* p) -> View* {
             auto* view = new NextTokenView(d, p);
             bindNextTokenView(view, ModelDocument::of(d));
             return view;
         }},
        {QStringLiteral("head-roles"), probe,
         [](Document* d, QWidget* p) -> View* {
             auto* view = new HeadRolesView(d, p);
             bindHeadRolesView(view, ModelDocument::of(d));
             return view;
         }},
        // A translation model writing its sentence, word by word, reading the source.
        {QStringLiteral("translation"), probe,
         [](Document* d, QWidget* p) -> View* { return new TranslationView(d, p); }},
        // Where the prediction comes from: each layer's guess, each head's share.
        {QStringLiteral("logit-lens"), probe,
         [](Document* d, QWidget* p) -> View* { return new LogitLensView(d, p); }},
        {QStringLiteral("attribution"), probe,
         [](Document* d, QWidget* p) -> View* { return new AttributionView(d, p); }},
        // Which heads carry the difference between a clean and a corrupted prompt.
        {QStringLiteral("patching"), probe,
         [](Document* d, QWidget* p) -> View* { return new PatchingView(d, p); }},
        // An encoder filling in [MASK], reading both sides.
        {QStringLiteral("fill-mask"), probe,
         [](Document* d, QWidget* p) -> View* { return new FillMaskView(d, p); }},
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
