#pragma once
/// StepControls: the step bar both steppers (FlashAttention tiles, KV-cache decoding) share:
/// Back, Step, optionally Play (Pause while playing) with a speed, a slider and "step / last". It holds no
/// step of its own: the view tells it where it is (setPosition) and it asks the view to move
/// (stepRequested), so the step stays in the session's view state.

#include <QWidget>

#include "attnlab/attention/attention.h"
#include "attnlab/attention/mask.h"
#include "attnlab/base/result.h"
#include "attnlab/base/tensor.h"
#include "attnlab/io/npy.h"
#include "attnlab/lab/embedding.h"
#include "attnlab/lab/session.h"
#include "attnlab/lab/stats.h"
#include "ui/views/flow_layout.h"

class QLabel;
class QSlider;
class QSpinBox;
class QTimer;
class QToolButton;

namespace attnlab::ui {

class StepControls : public QWidget {
    Q_OBJECT
public:
    /// `playable` adds a Play / Pause button and a steps-per-second box.
    StepControls(const QString& stepTip, bool playable, QWidget* parent = nullptr);

    /// Shows step `step` of [0, last]; last < 0 means there is nothing to step.
    void setPosition(Index step, Index last);
    /// Counts the steps from 1 in "step / last" ("1 / 7" at step 0 of [0, 6]): steps that each
    /// make one thing (a written word), where the view's title counts them the same way.
    void setCountFromOne(bool fromOne);
    /// The "step / last" text beside the slider.
    QString positionText() const;
    Index step() const { return m_step; }
    Index last() const { return m_last; }
    /// The layout, for widgets a view adds after the slider (block sizes, "Use a KV cache").
    FlowLayout* bar() const { return m_bar; }

    void stepForward();
    void stepBack();
    /// Steps forward at speed() per second; restarts from 0 when at the end; stops at the end.
    void play();
    void pause();
    bool playing() const;
    void setSpeed(int stepsPerSecond);

signals:
    /// The person asked to go to `step` (already clamped to [0, last]).
    void stepRequested(attnlab::Index step);

private:
    void request(Index step);
    void updateButtons();

    Index m_step = 0;
    Index m_last = -1;
    bool m_countFromOne = false;
    FlowLayout* m_bar = nullptr;
    QToolButton* m_back = nullptr;
    QToolButton* m_forward = nullptr;
    QToolButton* m_play = nullptr; ///< Play, or Pause while playing
    QSpinBox* m_speed = nullptr;
    QSlider* m_slider = nullptr;
    QLabel* m_label = nullptr;
    QTimer* m_timer = nullptr;
};

} // namespace attnlab::ui
