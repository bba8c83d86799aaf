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

#include <string>

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
};

/// Parses the text of a .meta file. `fileName` is used in messages only;
/// `expectedEntry`, when non-empty, must equal the entry key (it is the file
/// stem). Every documented key appears at most once, and all but the
/// optional red_max_blocks and quad_b are required; keys this version does
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
/// cluster_m/n, red_max_blocks, epilogue, quad_b, unsafe) must be equal, and
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

} // namespace runtime
} // namespace dgemm

#endif // DGEMM_RUNTIME_KERNELBUNDLE_H
