#pragma once
/// The instruction set the core's float kernels run on, chosen once at run time: one binary
/// serves every x86-64 CPU at its best (AVX-512, AVX2 + FMA) and any other CPU through portable
/// C++. The SIMD targets give the same bytes as each other; the portable one agrees within
/// rounding (docs/compute.md, "Kernels chosen at run time").

#include <optional>
#include <string_view>

namespace attnlab {

/// The kernel targets, narrowest first.
enum class Isa {
    Generic, ///< portable C++ (any CPU; ARM64 included)
    Avx2,    ///< x86-64 AVX2 + FMA, 256-bit
    Avx512,  ///< x86-64 AVX-512 F + VL + BW + DQ, 512-bit
};

/// Every target, narrowest first.
inline constexpr Isa kAllIsas[] = {Isa::Generic, Isa::Avx2, Isa::Avx512};

/// "generic", "avx2" or "avx512": the spelling ATTNLAB_ISA and the commands use.
std::string_view isaName(Isa isa);

/// The target named `name` (isaName's spelling), or nothing.
std::optional<Isa> isaFromName(std::string_view name);

/// Whether this binary holds kernels for `isa` and this CPU (and its OS) can run them.
bool isaSupported(Isa isa);

/// The widest target isaSupported() allows.
Isa bestIsa();

/// The target the kernels run on: the environment variable ATTNLAB_ISA when it names a
/// supported target (read once, at the first call), else bestIsa(). An unknown or unsupported
/// ATTNLAB_ISA is ignored and isaOverrideProblem() says why.
Isa activeIsa();

/// Runs the kernels on `isa` from now on, for the whole process (tests and benchmarks; not
/// while another thread runs a kernel). Throws InvalidArgument when !isaSupported(isa).
void setActiveIsa(Isa isa);

/// When ATTNLAB_ISA is set but could not be honoured: a sentence saying why; else nothing.
std::optional<std::string_view> isaOverrideProblem();

} // namespace attnlab
