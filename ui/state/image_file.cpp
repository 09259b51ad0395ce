#include "ui/state/image_file.h"

#include <QImageReader>
#include <QtGlobal>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "attnlab/model/image_processor.h"

namespace attnlab::ui {

namespace {

/// What the image plugins say while they read (libpng's "Read Error", a JPEG's warnings): kept
/// for the one error line instead of printed beside it.
thread_local std::string t_readerSays;

void keepReaderMessage(QtMsgType, const QMessageLogContext&, const QString& message) {
    t_readerSays = message.toStdString();
}

/// Installs keepReaderMessage for its lifetime.
class ReaderMessages {
public:
    ReaderMessages() : m_previous(qInstallMessageHandler(keepReaderMessage)) {
        t_readerSays.clear();
    }
    ~ReaderMessages() { qInstallMessageHandler(m_previous); }
    ReaderMessages(const ReaderMessages&) = delete;
    ReaderMessages& operator=(const ReaderMessages&) = delete;
    /// The reader's error, with what the plugin said when it said more.
    static std::string error(const QImageReader& reader) {
        std::string text = reader.errorString().toStdString();
        if (!t_readerSays.empty() && t_readerSays != text) text += " (" + t_readerSays + ")";
        return text;
    }

private:
    QtMessageHandler m_previous;
};

/// Standard error closed for its lifetime: libpng prints its own "libpng error: ..." there
/// before Qt's reader reports the failure, which is said once, in the caller's message.
class QuietStandardError {
public:
    QuietStandardError() {
        std::fflush(stderr);
        m_saved = ::dup(STDERR_FILENO);
        const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (m_saved >= 0 && null >= 0) ::dup2(null, STDERR_FILENO);
        if (null >= 0) ::close(null);
    }
    ~QuietStandardError() {
        std::fflush(stderr);
        if (m_saved >= 0) {
            ::dup2(m_saved, STDERR_FILENO);
            ::close(m_saved);
        }
    }
    QuietStandardError(const QuietStandardError&) = delete;
    QuietStandardError& operator=(const QuietStandardError&) = delete;

private:
    int m_saved = -1;
};

} // namespace

Result<QImage> readImageFile(const QString& path) {
    const std::string name = path.toStdString();
    const ReaderMessages messages;
    const QuietStandardError quiet;
    QImageReader reader(path);
    const QSize size = reader.size();
    if (!size.isValid())
        return Error{name + ": not an image AttnLab can read (" + ReaderMessages::error(reader) +
                     ")"};
    if (size.width() > model::kMaxImageSide || size.height() > model::kMaxImageSide)
        return Error{name + ": the image is " + std::to_string(size.width()) + " x " +
                     std::to_string(size.height()) + " pixels; AttnLab reads images of at most " +
                     std::to_string(model::kMaxImageSide) + " pixels a side"};
    QImage image;
    if (!reader.read(&image) || image.isNull())
        return Error{name + ": " + ReaderMessages::error(reader)};
    return image.convertToFormat(QImage::Format_RGB888);
}

std::vector<std::uint8_t> rgbBytesOf(const QImage& image) {
    const QImage rgb = image.format() == QImage::Format_RGB888
                           ? image
                           : image.convertToFormat(QImage::Format_RGB888);
    const auto width = static_cast<std::size_t>(rgb.width());
    std::vector<std::uint8_t> bytes(width * static_cast<std::size_t>(rgb.height()) * 3);
    for (int y = 0; y < rgb.height(); ++y)
        std::memcpy(bytes.data() + static_cast<std::size_t>(y) * width * 3, rgb.constScanLine(y),
                    width * 3);
    return bytes;
}

} // namespace attnlab::ui
