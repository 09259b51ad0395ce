#include "ui/views/step_controls.h"

#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QTimer>
#include <QToolButton>

#include <algorithm>

namespace attnlab::ui {

StepControls::StepControls(const QString& stepTip, bool playable, QWidget* parent)
    : QWidget(parent), m_bar(new FlowLayout(this)), m_timer(new QTimer(this)) {
    m_bar->setContentsMargins(6, 4, 6, 0);
    auto button = [this](const QString& text, const QString& tip) {
        auto* b = new QToolButton(this);
        b->setText(text);
        b->setToolTip(tip);
        m_bar->addWidget(b);
        return b;
    };
    m_back = button(tr("\u25c2 Back"), tr("Go back one step"));
    m_forward = button(tr("Step \u25b8"), stepTip);
    if (playable) {
        // One button that plays and pauses, as media controls do: the row fits beside the
        // lesson on a 1280-pixel projector.
        m_play = button(tr("Play"), tr("Step through automatically"));
        m_speed = new QSpinBox(this);
        m_speed->setRange(1, 60);
        m_speed->setValue(2);
        // A short suffix: the whole row fits a 1280 px projector beside the inputs.
        m_speed->setSuffix(tr("/s"));
        m_speed->setToolTip(tr("Playing speed, in steps per second"));
        m_bar->addWidget(m_speed);
        connect(m_play, &QToolButton::clicked, this, [this] { playing() ? pause() : play(); });
        connect(m_speed, &QSpinBox::valueChanged, this, &StepControls::setSpeed);
    }
    m_slider = new QSlider(Qt::Horizontal, this);
    m_slider->setToolTip(tr("Steps done"));
    m_bar->addWidget(m_slider, 1);
    m_label = new QLabel(this);
    m_bar->addWidget(m_label);

    connect(m_back, &QToolButton::clicked, this, &StepControls::stepBack);
    connect(m_forward, &QToolButton::clicked, this, &StepControls::stepForward);
    connect(m_slider, &QSlider::valueChanged, this, [this](int value) { request(value); });
    connect(m_timer, &QTimer::timeout, this, [this] {
        if (m_step >= m_last)
            pause();
        else
            stepForward();
    });
    setSpeed(m_speed ? m_speed->value() : 2);
    updateButtons();
}

void StepControls::setCountFromOne(bool fromOne) {
    m_countFromOne = fromOne;
    setPosition(m_step, m_last);
}

QString StepControls::positionText() const {
    return m_label->text();
}

void StepControls::setPosition(Index step, Index last) {
    m_last = last;
    m_step = std::clamp<Index>(step, 0, std::max<Index>(0, last));
    {
        const QSignalBlocker blocker(m_slider);
        m_slider->setRange(0, static_cast<int>(std::max<Index>(0, last)));
        m_slider->setValue(static_cast<int>(m_step));
    }
    const Index first = m_countFromOne ? 1 : 0;
    m_label->setText(last >= 0 ? tr("%1 / %2").arg(m_step + first).arg(last + first) : QString());
    if (last < 0 && playing()) m_timer->stop();
    updateButtons();
}

void StepControls::request(Index step) {
    if (m_last < 0) return;
    emit stepRequested(std::clamp<Index>(step, 0, m_last));
}

void StepControls::stepForward() {
    request(m_step + 1);
}

void StepControls::stepBack() {
    request(m_step - 1);
}

void StepControls::play() {
    if (m_last <= 0) return;
    if (m_step >= m_last) request(0);
    m_timer->start();
    updateButtons();
}

void StepControls::pause() {
    m_timer->stop();
    updateButtons();
}

bool StepControls::playing() const {
    return m_timer->isActive();
}

void StepControls::setSpeed(int stepsPerSecond) {
    m_timer->setInterval(1000 / std::max(1, stepsPerSecond));
}

void StepControls::updateButtons() {
    const bool any = m_last >= 0;
    m_slider->setEnabled(any && m_last > 0);
    m_back->setEnabled(any && m_step > 0);
    m_forward->setEnabled(any && m_step < m_last);
    if (m_play) {
        m_play->setEnabled(playing() || m_last > 0);
        m_play->setText(playing() ? tr("Pause") : tr("Play"));
        m_play->setToolTip(playing() ? tr("Stop playing") : tr("Step through automatically"));
    }
}

} // namespace attnlab::ui
