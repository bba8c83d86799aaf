//===- KernelBundle.h - Kernel bundle lookup and .meta files ----*- C++ -*-===//
//
// A kernel bundle is a directory of <entry>.ptx and <entry>.meta files
// (docs/KernelABI.md). The .meta file tells the runtime how to launch the
// PTX; its tiling keys must match the configuration the heuristics chose,
// because the kernel bakes them in.
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_RUNTIME_KERNELBUNDLE_H
#define DGEMM_RUNTIME_KERNELBUNDLE_H

#include "dgemm/Heuristics/KernelConfig.h"
#include "dgemm/Runtime/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dgemm {
namespace runtime {

/// The parameter-table version (docs/KernelABI.md) this runtime launches.
using heuristics::kKernelAbiVersion;

/// One parsed and range-checked .meta file.
struct KernelMeta {
  std::string entry;
  std::string kind;
  int abi = 0;
  int blockM = 0, blockN = 0, blockK = 0;
  int stages = 0;
  int descSlots = 0;
  int mathWarpgroups = 0;
  int threads = 0;
  int clusterM = 0, clusterN = 0;
  int smemBytes = 0;
  /// Optional key (absent: 0): tiles of at most this many K blocks reduce
  /// into d in place. Informational for the launch; it must match the
  /// configuration.
  int redMaxBlocks = 0;
  /// Key epilogue: how the tiles reach d (the in-place kernels require c to
  /// be d). It must match the configuration.
  heuristics::Epilogue epilogue = heuristics::Epilogue::Register;
  /// Optional key (absent: 0): 1 for a kernel that reads B's rows in quad
  /// order through a 5-D map (docs/KernelABI.md); N must be a multiple of 16.
  int quadB = 0;
  /// Key unsafe: the heuristics::Unsafe options the kernel was built with
  /// (0: none); such a kernel loads only where unsafe kernels are allowed.
  unsigned unsafe = 0;
  /// Key heuristics_version: heuristics::kHeuristicsVersion of the compiler
  /// that wrote the bundle; must equal this runtime's.
  int heuristicsVersion = 0;
  /// Optional keys of the BF16 kernels (absent: fp8, k, k, 0, 0): the
  /// operands' element type and majorness, an FP32 d, and whether the kernel
  /// adds its product to d. They must match the configuration.
  heuristics::Dtype dtype = heuristics::Dtype::Fp8;
  heuristics::Major majorA = heuristics::Major::K,
                    majorB = heuristics::Major::K;
  int dF32 = 0, accumulate = 0;
};

/// Parses the text of a .meta file. `fileName` is used in messages only;
/// `expectedEntry`, when non-empty, must equal the entry key (it is the file
/// stem). Every documented key appears at most once, and all but the
/// optional red_max_blocks, quad_b and the BF16 keys (dtype, major_a,
/// major_b, d_f32, accumulate) are required; keys this version does
/// not know are ignored so that newer compilers may add some. A file without
/// epilogue, unsafe or heuristics_version (an older compiler's, which wrote
/// in_place_only and park instead) is refused with how to regenerate the
/// bundle, as is one whose heuristics_version is not
/// heuristics::kHeuristicsVersion. Errors (ErrorCode::BadKernelBundle) name
/// the file, the line or key, and the rule.
Status parseKernelMeta(const std::string &text, const std::string &fileName,
                       const std::string &expectedEntry, KernelMeta &meta);

/// Reads and parses `<dir>/<entry>.meta`. A missing file is
/// ErrorCode::KernelNotFound.
Status loadKernelMeta(const std::string &dir, const std::string &entry,
                      KernelMeta &meta);

/// Refuses (ErrorCode::BadKernelBundle) a kernel built with an Unsafe option
/// unless `allowUnsafe`, naming the options and how to allow them.
Status checkKernelSafety(const KernelMeta &meta, const std::string &fileName,
                         bool allowUnsafe);

/// checkKernelSafety, then checks that `meta` describes the kernel `config`
/// names: the tiling keys (block_m/n/k, stages, desc_slots, math_warpgroups,
/// cluster_m/n, red_max_blocks, epilogue, quad_b, unsafe, dtype, major_a,
/// major_b, d_f32, accumulate) must be equal, and
/// threads and smem_bytes must be what the configuration implies
/// (KernelConfig::threads, smemBytes). Errors name the key.
Status checkMetaMatchesConfig(const KernelMeta &meta,
                              const heuristics::KernelConfig &config,
                              const std::string &fileName, bool allowUnsafe);

/// The same with allowUnsafe = unsafeKernelsAllowed() (Overrides.h).
Status checkMetaMatchesConfig(const KernelMeta &meta,
                              const heuristics::KernelConfig &config,
                              const std::string &fileName);

/// Sets the bundle directory used when DGEMM_KERNEL_DIR is not set; an empty
/// string clears it. Thread-safe.
void setKernelDir(const std::string &dir);

/// The bundle directory: $DGEMM_KERNEL_DIR if set and non-empty, else the
/// one given to setKernelDir, else the compile-time DGEMM_DEFAULT_KERNEL_DIR.
/// Fails (ErrorCode::KernelNotFound) if all three are empty.
Status resolveKernelDir(std::string &dir);

/// Reads a whole file; ErrorCode::KernelNotFound if it cannot be opened.
Status readFile(const std::string &path, std::string &contents);

/// The layout version of index.txt this runtime reads (docs/KernelABI.md).
inline constexpr int kBundleIndexFormat = 2;

/// FNV-1a, 64-bit: the checksum of index.txt (dgemm-translate computes the
/// same).
uint64_t fnv1a64(const std::string &data);

/// One `kernel=` line of index.txt: the entry and its files' checksums; no
/// cubin checksum for a kernel bundled as PTX only.
struct BundleIndexEntry {
  std::string entry;
  uint64_t meta = 0, ptx = 0;
  std::optional<uint64_t> cubin;
};

/// A parsed index.txt.
struct BundleIndex {
  int format = 0;
  std::string gitCommit;
  int heuristicsVersion = 0;
  int kernelAbi = 0;
  std::string target;
  /// The PTX ISA of the bundle's .ptx files ("8.6"), or "unknown".
  std::string ptxIsa;
  /// Optional key ptxas: the CUDA release of the ptxas that assembled the
  /// cubins ("13.0"), "none" without cubins, "unknown" (or absent) when not
  /// known.
  std::string ptxasRelease = "unknown";
  std::vector<BundleIndexEntry> kernels;

  const BundleIndexEntry *find(const std::string &entry) const;
};

/// Parses index.txt's text (same line rules as a .meta; `kernel=` repeats).
/// Refuses, with how to regenerate the bundle, an index of another format
/// (an older compiler's plain list of entries), heuristics version or kernel
/// ABI. Errors (ErrorCode::BadKernelBundle) name the file and the line.
Status parseBundleIndex(const std::string &text, const std::string &fileName,
                        BundleIndex &index);

/// Reads and parses `<dir>/index.txt`, then checks that the bundle is
/// complete: every kernel it lists has its .meta and .ptx, and its .cubin
/// where it lists a checksum for one. A missing index is
/// ErrorCode::KernelNotFound (dgemm-translate writes it last, so a bundle
/// without one is half-written, or there is none); a listed file that is
/// missing is ErrorCode::BadKernelBundle.
Status loadBundleIndex(const std::string &dir, BundleIndex &index);

/// Reads `<dir>/<entry><ext>` into `contents` and checks it against the
/// index's checksum; a mismatch is ErrorCode::BadKernelBundle.
Status readIndexedFile(const std::string &dir, const std::string &entry,
                       const std::string &ext, uint64_t checksum,
                       std::string &contents);

/// loadBundleIndex, then every listed file's checksum (reads the whole
/// bundle; a kernel load checks only its own files).
Status checkKernelBundle(const std::string &dir, BundleIndex &index);

/// Writes `<dir>/index.txt` for a bundle assembled by hand (tests): every
/// `<entry>.meta` in `dir` with its `.ptx` and, if present, `.cubin`, the
/// PTX ISA read from the first `.ptx` (`.version`), this runtime's versions
/// and git_commit=hand-made.
Status writeBundleIndex(const std::string &dir);

/// The CUDA driver version (1000 * major + 10 * minor) that can JIT-compile
/// PTX of ISA `ptxIsa` ("8.6" -> 12070), from the PTX ISA release history;
/// 0 for a version this runtime does not know.
int driverVersionForPtxIsa(const std::string &ptxIsa);

/// Refuses (ErrorCode::NoDriver) to load a cubin assembled by the ptxas of
/// CUDA `ptxasRelease` ("13.0") where the driver (`driverVersion`, e.g.
/// 12090) is of an older major version: cubins are compatible within a major
/// version only. Unknown versions pass.
Status checkDriverCanLoadCubin(int driverVersion,
                               const std::string &ptxasRelease,
                               const std::string &path);

/// The ".version" of a PTX text ("8.6"), or "" if it has none.
std::string ptxIsaOf(const std::string &ptx);

/// The command that regenerates the bundle in `dir` (for messages).
std::string regenerateCommand(const std::string &dir);

} // namespace runtime
} // namespace dgemm

#endif // DGEMM_RUNTIME_KERNELBUNDLE_H
