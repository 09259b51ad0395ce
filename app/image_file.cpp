#include "image_file.h"

#include "attnlab/model/image_processor.h"

#ifdef ATTNLAB_HAS_UI
#include <QImage>
#include <QImageReader>
#include <QString>
#include <QtGlobal>
#include <fcntl.h>
#include <unistd.h>
#endif

#include <cstdio>

#include <cstring>

namespace attnlab::app {

#ifdef ATTNLAB_HAS_UI
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
/// before Qt's reader reports the failure, which is said once, in the caller's one line.
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
#endif

Result<RgbImage> readRgbImage(const std::string& path) {
#ifdef ATTNLAB_HAS_UI
    const ReaderMessages messages;
    const QuietStandardError quiet;
    QImageReader reader(QString::fromStdString(path));
    const QSize size = reader.size();
    if (!size.isValid())
        return Error{path + ": not an image AttnLab can read (" + ReaderMessages::error(reader) +
                     ")"};
    if (size.width() > model::kMaxImageSide || size.height() > model::kMaxImageSide)
        return Error{path + ": the image is " + std::to_string(size.width()) + " x " +
                     std::to_string(size.height()) + " pixels; AttnLab reads images of at most " +
                     std::to_string(model::kMaxImageSide) + " pixels a side"};
    QImage image;
    if (!reader.read(&image) || image.isNull())
        return Error{path + ": " + ReaderMessages::error(reader)};
    image = image.convertToFormat(QImage::Format_RGB888);
    RgbImage out;
    out.width = image.width();
    out.height = image.height();
    out.rgb.resize(static_cast<std::size_t>(out.width * out.height * 3));
    for (Index y = 0; y < out.height; ++y)
        std::memcpy(out.rgb.data() + y * out.width * 3, image.constScanLine(static_cast<int>(y)),
                    static_cast<std::size_t>(out.width * 3));
    return out;
#else
    return Error{path + ": this attnlab was built without Qt (ATTNLAB_BUILD_UI=OFF), whose "
                        "image readers read PNG and JPEG"};
#endif
}

} // namespace attnlab::app
