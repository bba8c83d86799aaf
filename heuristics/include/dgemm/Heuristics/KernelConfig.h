//===- KernelConfig.h - K-grouped FP8 kernel configurations -----*- C++ -*-===//
//
// The tile/pipeline parameters of the k-grouped FP8 GEMM kernel, the rules a
// configuration must satisfy to be lowered, and the heuristic that picks one
// for a problem. Plain C++17 so that both the compiler (dgemm-select-config)
// and the runtime can use it. See docs/Heuristics.md and docs/KernelABI.md.
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_HEURISTICS_KERNELCONFIG_H
#define DGEMM_HEURISTICS_KERNELCONFIG_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dgemm {
namespace heuristics {

/// The kernel parameter-table version (docs/KernelABI.md) the compiler
/// writes into every .meta file and the runtime launches.
inline constexpr int kKernelAbiVersion = 4;

/// The version of the rules below (selection, candidates, validity), which
/// the compiler writes into every .meta file (heuristics_version=) and the
/// runtime requires to equal its own: a bundle from other rules may lack the
/// kernels this runtime selects. Bumped whenever a rule changes.
inline constexpr int kHeuristicsVersion = 3;

/// Largest m, n, K of one group and group count a problem may have: the
/// kernel takes each as a 32-bit parameter (docs/KernelABI.md).
inline constexpr int64_t kMaxProblemExtent = 2147483647;

/// The device the kernel is built for. Defaults are the H200 (SM90a), but
/// for the memory bandwidth, which is unknown unless set.
struct Target {
  int numSMs = 132;
  int maxSmemPerBlock = 232448;
  /// Peak DRAM bandwidth in GB/s (the runtime computes it from the driver's
  /// memory clock and bus width); 0 when unknown. It selects the calibration
  /// of the measured rules (calibrationFor).
  int memoryBandwidthGBps = 0;
};

/// The card whose measurements set the empirical rules of
/// selectKGroupedConfig (the short-group tile width and the in-place
/// epilogue): the two SM90 parts differ in memory bandwidth (3.35 TB/s on
/// the H100 SXM, 4.8 TB/s on the H200), which moves the balance between a
/// tile's epilogue and its block loop (docs/Heuristics.md).
enum class Calibration { H100, H200 };

/// Peak bandwidth from which a target takes the H200 calibration.
inline constexpr int kH200MinBandwidthGBps = 4000;

/// H200 where target.memoryBandwidthGBps >= kH200MinBandwidthGBps, else
/// H100 (also when the bandwidth is unknown).
Calibration calibrationFor(const Target &target);

/// "H100" or "H200".
const char *calibrationName(Calibration calibration);

/// A k-grouped problem: G groups, each D_g (M x N) += A_g (M x K_g) B_g^T.
struct KGroupedProblem {
  int64_t m = 0, n = 0;
  int numGroups = 0;
  /// Per-group K if known; may be empty. When non-empty it is authoritative
  /// and its size is the number of groups.
  std::vector<int64_t> ks;
  /// K of every group when `ks` is empty; 0 means unknown (4096 is assumed).
  int64_t expectedKPerGroup = 0;
  /// Whether c is d (the call accumulates into d in place). Only then can
  /// an epilogue other than Epilogue::Register be chosen.
  bool inPlace = false;
};

/// "" if every size of `problem` is in [0, kMaxProblemExtent] (m, n,
/// numGroups, each of ks, expectedKPerGroup, the size of ks; negative K
/// count as 0, as everywhere below), else a message naming the first field
/// out of range. selectKGroupedConfig, estimateKGroupedMakespanUs and
/// selectRasterBand return their fallback for such a problem.
std::string checkProblem(const KGroupedProblem &problem);

/// How a kernel adds each tile's sums to d (docs/Kernel.md).
enum class Epilogue : int {
  /// Load c, add, store d: the only epilogue of a call with a separate c.
  Register = 0,
  /// In place (c is d): a tile of at most KernelConfig::redMaxBlocks K
  /// blocks adds its sum to d with `red.global.add` instead of loading c;
  /// longer tiles take the register epilogue.
  Reduction = 1,
  /// The in-place kernel: c must be d, and every tile with K blocks adds its
  /// sum to d with 16-byte `red.global.add` (no register epilogue; c
  /// prefetched into L2 only for tiles of at most kRedEpilogueTileBlocks
  /// blocks, at the tile's start).
  InPlace = 2,
  /// The in-place kernel with parked tiles: the math warpgroups write each
  /// tile's FP32 sums into shared memory after the pipeline (the park) and
  /// go on to the next tile, while threads 32 and up of the producer
  /// warpgroup add the parked tile to d (see checkPark for its rules).
  Parked = 3,
};

/// "register", "reduction", "in_place" or "parked" (the .meta spelling);
/// "invalid" for a value outside the enum.
const char *epilogueName(Epilogue epilogue);

/// The epilogue epilogueName spells `name`, if any.
std::optional<Epilogue> parseEpilogue(std::string_view name);

/// Whether `epilogue` requires c to be d (InPlace and Parked).
bool isInPlaceKernel(Epilogue epilogue);

/// Race-demonstration variants (a bit set in KernelConfig::unsafe): kernels
/// built without a synchronisation the production kernel needs, so that the
/// tests can show the race it prevents. Never selected; the runtime refuses
/// to load them unless unsafe kernels were allowed (docs/Runtime.md).
enum class Unsafe : unsigned {
  None = 0,
  /// No descriptor drain before a group switch reuses a tensor-map slot
  /// (DeepGEMM 2.6.1's race; compiler option --unsafe-skip-descriptor-drain).
  SkipDescriptorDrain = 1,
  /// No proxy fence before the stage releases that follow ld.shared
  /// (--unsafe-skip-proxy-fence).
  SkipProxyFence = 2,
};
inline constexpr Unsafe operator|(Unsafe a, Unsafe b) {
  return Unsafe(unsigned(a) | unsigned(b));
}
inline constexpr Unsafe operator&(Unsafe a, Unsafe b) {
  return Unsafe(unsigned(a) & unsigned(b));
}
inline constexpr unsigned operator|(unsigned a, Unsafe b) {
  return a | unsigned(b);
}
inline constexpr unsigned operator&(unsigned a, Unsafe b) {
  return a & unsigned(b);
}
/// Every bit Unsafe defines.
inline constexpr unsigned kUnsafeMask =
    unsigned(Unsafe::SkipDescriptorDrain | Unsafe::SkipProxyFence);

/// The set bits of `unsafe`, comma-separated in bit order:
/// "skip_descriptor_drain", "skip_proxy_fence"; "" when none is set. Bits
/// outside kUnsafeMask are named "bit<i>".
std::string unsafeNames(unsigned unsafe);

/// The bit set `text` spells: "none" (0), or unsafeNames' comma list (each
/// name at most once, any order, no spaces); nullopt otherwise.
std::optional<unsigned> parseUnsafe(std::string_view text);

/// The GEMM kind a kernel computes: the dialect's GemmKind, same values and
/// spelling. Each kind has its kernel family (docs/AddingAKernelKind.md):
/// KGroupedContiguous the FP8 1D1D weight gradient (this header's
/// selection); MGroupedContiguous, MGroupedMasked, MGroupedContiguousPsum
/// and Normal the FP8 1D2D kernel family with BF16 d, one kernel per row
/// mapping (MGroupedConfig.h).
enum class Kind : int {
  Normal = 0,
  MGroupedContiguous = 1,
  MGroupedMasked = 2,
  KGroupedContiguous = 3,
  MGroupedContiguousPsum = 4,
};

/// "normal", "m_grouped_contiguous", "m_grouped_masked",
/// "k_grouped_contiguous", "m_grouped_contiguous_psum" (the .meta
/// spelling); "invalid" otherwise.
const char *kindName(Kind kind);

/// The kind kindName spells `name`, if any.
std::optional<Kind> parseKind(std::string_view name);

/// The element type of A and B: FP8 e4m3 with block scales (the k-grouped
/// 1D1D and the 1D2D kernels) or BF16 without scales (Bf16Config.h).
enum class Dtype : int { Fp8 = 0, Bf16 = 1 };

/// "fp8" or "bf16" (the .meta spelling); "invalid" otherwise.
const char *dtypeName(Dtype dtype);
std::optional<Dtype> parseDtype(std::string_view name);

/// Which dimension of an operand is contiguous in memory: K (K-major, A as
/// [M, K]) or M/N (MN-major, A as [K, M]). The FP8 kernels take both
/// operands K-major; a BF16 kernel either (Bf16Config.h).
enum class Major : int { K = 0, MN = 1 };

/// "k" or "mn" (the .meta spelling); "invalid" otherwise.
const char *majorName(Major major);
std::optional<Major> parseMajor(std::string_view name);

/// One kernel variant; every field is baked into the generated PTX.
struct KernelConfig {
  /// The kernel family. Fields below that a family does not use hold the
  /// value checkConfig requires for it.
  Kind kind = Kind::KGroupedContiguous;
  int blockM = 128, blockN = 128, blockK = 128, stages = 0, descSlots = 2,
      mathWarpgroups = 2;
  int clusterM = 1,
      clusterN = 1; // cluster_m = 2 multicasts B; cluster_n = 2 is not lowered
  int swizzleA = 128, swizzleB = 128; // bytes
  int numSMs = 132;
  /// How the tiles reach d (Epilogue); Reduction exactly when
  /// redMaxBlocks > 0 (checkConfig).
  Epilogue epilogue = Epilogue::Register;
  /// With Epilogue::Reduction: the longest tile, in 128-deep K blocks, that
  /// adds its sum with `red.global.add`; 0 with every other epilogue.
  int redMaxBlocks = 0;
  /// Quad-ordered B (1): B's rows reach shared memory through a 5-D tensor
  /// map in the order 16g + 8h + 2q + c <- 16g + 4q + 2h + c, so that each
  /// thread's fragment holds 4 consecutive columns per 16: 16-byte sfb loads
  /// and 16-byte epilogue accesses without shuffles (docs/Kernel.md). Needs
  /// N % 16 == 0 at launch and blockN % (16 * clusterM) == 0; excludes the
  /// in-place kernels. 0: B's rows in order.
  int quadB = 0;
  /// Race-demonstration variant: a set of Unsafe bits; 0 for every kernel
  /// the heuristics choose.
  unsigned unsafe = 0;
  /// The operands' element type; a BF16 config has blockK = kBf16BlockK.
  Dtype dtype = Dtype::Fp8;
  /// The operands' majorness (BF16 only; the FP8 kernels: K, K).
  Major majorA = Major::K, majorB = Major::K;
  /// BF16 only: d is FP32 (1) rather than BF16 (0); with accumulate (1) the
  /// kernel adds its product to d (c is d). The FP8 kinds: 0, their d type
  /// being the kind's.
  int dF32 = 0, accumulate = 0;

  /// One TMA producer warpgroup plus the math warpgroups.
  int threads() const;
  /// Dynamic shared memory: smemLayoutFor(*this).totalBytes (saturated at
  /// INT32_MAX for a config too large to describe).
  int smemBytes() const;
  /// M-grouped: "dgemm_mgrouped_fp8_1d2d_bm<M>_bn<N>_s<S>", plus
  /// "_unsafe_nofence" for that bit. K-grouped:
  /// "dgemm_kgrouped_fp8_1d1d_bm<M>_bn<N>_s<S>_r<R>", plus "_c<cm>x<cn>" only
  /// when a cluster dimension is not 1, plus "_red<B>" only when redMaxBlocks
  /// is B > 0, plus "_ip" only for the in-place kernels (InPlace, Parked),
  /// plus "_q" only when quadB is 1, plus "_park" only when Parked, plus
  /// "_unsafe_nodrain" and then "_unsafe_nofence" for those Unsafe bits.
  std::string entryName() const;
  /// The .meta file of docs/KernelABI.md, one key=value per line: entry,
  /// kind (kindName), abi, block_m, block_n, block_k, stages, desc_slots,
  /// math_warpgroups, threads, cluster_m, cluster_n, smem_bytes,
  /// red_max_blocks, epilogue, quad_b, unsafe, heuristics_version, and
  /// for a BF16 config dtype, major_a, major_b, d_f32, accumulate (absent:
  /// fp8, k, k, 0, 0).
  std::string toMeta() const;

  bool operator==(const KernelConfig &other) const;
  bool operator!=(const KernelConfig &other) const { return !(*this == other); }
};

/// The SM90 limit of dynamic shared memory per block (the park must fit
/// under it; see parkFits).
inline constexpr int kSm90MaxSmemPerBlock = 232448;

/// Shared memory of the pipeline: 1024 bytes of alignment slack, then per
/// stage the A and B tiles (128 FP8 K per row), the sfa/sfb slices (padded to
/// 128 bytes), and a full/empty mbarrier pair, rounded up to 1024 bytes.
/// Saturates at INT64_MAX.
int64_t pipelineSmemBytesFor(int blockM, int blockN, int stages);

/// Shared memory of a kernel with parked tiles (Epilogue::Parked): the
/// pipeline, then the whole tile's FP32 sums (the park), its two mbarriers
/// and the parked tile's coordinates (one 32-bit value in 16 bytes).
int64_t parkedSmemBytesFor(int blockM, int blockN, int stages);

/// Where everything lives in a kernel's dynamic shared memory, in bytes
/// from the 1024-aligned base (the kernel rounds the dynamic base up at run
/// time; the 1024 bytes of slack for that are part of totalBytes). Per
/// stage s: A at aBase + s * aBytes, B at bBase + s * bBytes, and likewise
/// the scale slices and the full/empty mbarriers (8 bytes each).
struct SmemLayout {
  int64_t stages = 0;
  int64_t aBytes = 0, bBytes = 0, sfaBytes = 0, sfbBytes = 0;
  int64_t aBase = 0, bBase = 0, sfaBase = 0, sfbBase = 0;
  int64_t fullBase = 0, emptyBase = 0;
  /// The park (Epilogue::Parked): blockM x blockN FP32 at parkBase, then its
  /// full and empty mbarriers and the parked tile's record. parkBytes is 0
  /// for the other epilogues (parkBase is then the pipeline's end).
  int64_t parkBase = 0, parkBytes = 0;
  int64_t parkFullBarrier = 0, parkEmptyBarrier = 0, parkRecord = 0;
  /// KernelConfig::smemBytes(): pipelineSmemBytesFor, plus parkBytes + 32
  /// when parked.
  int64_t totalBytes = 0;
};

/// The layout of `config` (its kind, blockM, blockN, blockK, stages and
/// epilogue). The m-grouped kernel reads sfb from global memory: no sfb
/// slices (sfbBytes = 0).
/// Every sum saturates at INT64_MAX, so a config checkConfig rejects still
/// gets a layout (too large to fit).
SmemLayout smemLayoutFor(const KernelConfig &config);

/// "" if `config`, taken as Epilogue::Parked, follows the park's rules, else
/// the first rule it breaks (by .meta key): two math warpgroups, no
/// cluster, B in order, block_n a multiple of 32 (the park's swizzle works
/// on 128-byte groups). Shared memory is checkConfig's.
std::string checkPark(const KernelConfig &config);

/// Whether `config` (Epilogue::Parked) can park its tiles on `target`:
/// checkPark, and parkedSmemBytesFor within the target (at 192 columns: 3
/// stages; at 128, 4).
bool parkFits(const KernelConfig &config, const Target &target);

/// Largest stage count whose parkedSmemBytesFor fits the target, capped at
/// 8; 0 when not even one stage fits.
int maxParkedStages(int blockM, int blockN, const Target &target);

/// Turns Epilogue::Parked into Epilogue::InPlace where checkPark rejects
/// `config` (after an override of its tile or cluster), with the most stages
/// that fit without the park: the in-place kernel of the same tile.
void unparkIfUnfit(KernelConfig &config, const Target &target);

/// The most stages that fit `config`'s kind, tile and epilogue on `target`,
/// up to 8: maxParkedStages when parked, else maxStages for the k-grouped
/// kernel; from smemLayoutFor for the other kinds.
int mostStages(const KernelConfig &config, const Target &target);

/// Widest mean K per group, in 128-deep blocks, of a call whose tiles
/// selectKGroupedConfig parks: 48 (6144 elements). bench/NOTES.md section 16.
inline constexpr int kParkMaxMeanBlocks = 48;

/// Largest stage count whose pipelineSmemBytesFor fits the target, capped
/// at 8; 0 when not even one stage fits.
int maxStages(int blockM, int blockN, const Target &target);

/// "" if `config` can be lowered for `target`, else a message naming the first
/// violated field (by its .meta key) and the rule.
std::string checkConfig(const KernelConfig &config, const Target &target);

/// Whether `config` with quad-ordered B (KernelConfig::quadB) is what the
/// heuristics choose for an output N columns wide: N % 16 == 0, not an
/// in-place kernel, and a width checkConfig accepts with quadB = 1.
bool quadBFits(const KernelConfig &config, int64_t n, const Target &target);

/// The modelled run time (microseconds) of `config` on `problem`: the largest
/// per-CTA sum of tile costs under the kernel's round-robin tile schedule.
/// Exposed so tests and tools can explain a choice. 0 for an empty problem;
/// +infinity where checkProblem rejects the problem, or for a config or
/// target it cannot model (a tile or SM count below 1, more than 65536
/// SMs).
double estimateKGroupedMakespanUs(const KGroupedProblem &problem,
                                  const KernelConfig &config,
                                  const Target &target);

/// redMaxBlocks of the kernels selectKGroupedConfig picks for in-place calls
/// (see there).
inline constexpr int kRedEpilogueTileBlocks = 8;

/// In place, groups of at most this many K blocks are faster with the
/// register epilogue than with the reductions (see selectKGroupedConfig).
inline constexpr int kRegisterEpilogueMaxBlocks = 6;

/// In place, uniform groups of at most this many K blocks (and more than
/// kRedEpilogueTileBlocks) measured faster with the register epilogue than
/// with the parked kernel, and longer ones slower: the crossover that
/// inPlaceTileTime reproduces (registerBeatsPark decides by it).
inline constexpr int kRegisterOverParkMaxBlocks = 11;

/// The modelled time of one in-place tile of `blocks` 128-deep K blocks with
/// the register epilogue (parked = false) or in the parked in-place kernel
/// (parked = true), in microseconds per group of 1024 tiles of 128 x 128 on
/// 132 SMs of an H100; only the ratio of the two is used. 0 for an empty
/// tile. Piecewise linear through measured points (docs/Heuristics.md).
double inPlaceTileTime(int64_t blocks, bool parked);

/// How the tiles of an in-place call add their sums to d: the register
/// epilogue (loading c, which is d), the reduction kernel (redMaxBlocks =
/// kRedEpilogueTileBlocks: reductions for tiles of at most that many blocks,
/// the register epilogue for longer ones), or the parked in-place kernel.
enum class InPlaceEpilogue { Register, Reduction, Parked };

/// inPlaceTileTime for `calibration`: with Calibration::H100 the register
/// and parked curves above (Reduction is not calibrated there: the H100
/// rules count blocks for it, and it returns the register curve); with
/// Calibration::H200 three curves measured on an H200, the reduction
/// kernel's register path 2.4% slower than the register kernel's.
double inPlaceTileTime(int64_t blocks, InPlaceEpilogue epilogue,
                       Calibration calibration);

/// On the H200 calibration, the in-place epilogue with the smallest
/// modelled time (inPlaceTileTime summed over the groups `ks`), the parked
/// kernel unless another is at least kRegisterOverParkMargin faster, and
/// the register epilogue unless the reduction kernel is that much faster
/// than it. Parked when every group is empty.
InPlaceEpilogue fastestInPlaceEpilogueH200(const std::vector<int64_t> &ks);

/// The register epilogue's advantage the in-place choice asks for: its
/// modelled time at most (1 - this) of the parked kernel's.
inline constexpr double kRegisterOverParkMargin = 0.01;

/// Whether, in place, the register epilogue's modelled time (the sum over
/// the groups `ks` of inPlaceTileTime) is at least kRegisterOverParkMargin
/// below the parked kernel's. False when every group is empty.
bool registerBeatsPark(const std::vector<int64_t> &ks);

/// Groups of at most this many K blocks run faster on 64-column tiles than on
/// the model's wider choice (see selectKGroupedConfig); on the H100
/// calibration.
inline constexpr int kNarrowTileMaxBlocks = 6;

/// kNarrowTileMaxBlocks on the H200 calibration: there 128 columns were
/// 6-9% faster than 64 at 4-6 blocks, and within 1.5% of them at 1-2.
inline constexpr int kNarrowTileMaxBlocksH200 = 2;

/// Groups of at most this many K blocks run faster on 128-column tiles than
/// on 160 or 192 columns (see selectKGroupedConfig).
inline constexpr int kNarrowTileTimeMaxBlocks = 16;

/// The tile with the smallest modelled makespan (see docs/Heuristics.md),
/// narrowed for short groups: with each group's K rounded up to 128-deep
/// blocks, a 128-row tile gets 64 columns when the groups of 1 to
/// kNarrowTileMaxBlocks blocks hold at least half of all blocks, else at most
/// 128 when those of 1 to kNarrowTileTimeMaxBlocks blocks hold at least half
/// of the modelled time (inPlaceTileTime with parked = false) or, in place,
/// registerBeatsPark (where N is padded no more). In place: the register
/// epilogue (redMaxBlocks = 0) when the groups of 1 to
/// kRegisterEpilogueMaxBlocks blocks hold at least half of all blocks; else
/// the reduction epilogue for short tiles (redMaxBlocks =
/// kRedEpilogueTileBlocks) when the groups of 1 to kRedEpilogueTileBlocks
/// blocks, whose tiles take it, hold at least as many blocks as the longer
/// groups, whose tiles do not; else the register epilogue again where
/// registerBeatsPark (on 128-column tiles where N is padded no more);
/// otherwise the in-place kernel (Epilogue::InPlace). That is the H100
/// calibration (calibrationFor); on the H200's, 64 columns take groups of
/// 1 to kNarrowTileMaxBlocksH200 blocks, the modelled times use the H200
/// curves, and in place the epilogue is fastestInPlaceEpilogueH200's, with
/// at most 128 columns unless it is the parked kernel. Then
/// cluster_m = 2 (B multicast across CTA pairs) when the m-block count is
/// even, N >= 4096 and the kernel is not an in-place one. An in-place
/// kernel with 128-row tiles parks its tiles (Epilogue::Parked, 128
/// columns, the most stages that fit with the park) when the groups' mean K is
/// at most kParkMaxMeanBlocks blocks and there are at least two tiles per SM.
/// Last, quad-ordered B where quadBFits. A problem checkProblem rejects gets
/// the first tile candidate with the register epilogue.
KernelConfig selectKGroupedConfig(const KGroupedProblem &problem,
                                  const Target &target);

/// The raster band of a launch on `problem` (a kernel argument, not baked
/// into the PTX: docs/KernelABI.md): each group's tiles are walked in bands
/// of this many m-blocks, the m-block varying fastest inside a band; 0 (or
/// anything below 2 * cluster_m) is row order, the n-block fastest.
/// Bands of 8 where a group's mean B (N x mean K bytes) is at least 24 MiB,
/// else row order (docs/Heuristics.md, bench/NOTES.md section 20); row
/// order where checkProblem rejects the problem.
int selectRasterBand(const KGroupedProblem &problem);

/// Every config selectKGroupedConfig can return for `target`, in a fixed
/// order without duplicates (every tile shape, then each with cluster_m =
/// 2, then all of those with the reduction epilogue, then every tile shape
/// as an in-place kernel), followed by the 192-row tiles (three math
/// warpgroups) that only the DGEMM_BLOCK_M override selects, each in the
/// three epilogue forms, then every one of those but the in-place kernels
/// with quad-ordered B where checkConfig allows it, then every in-place
/// kernel that parkFits as Epilogue::Parked with the most stages that fit;
/// used to pre-build the kernel bundle.
std::vector<KernelConfig> candidateKGroupedConfigs(const Target &target);

/// Overrides of a chosen (or candidate) configuration: the compiler's
/// options (dgemm-select-config, the bundle writer) and the runtime's
/// DGEMM_* environment variables (docs/Runtime.md). Unset fields keep the
/// configuration's value.
struct ConfigOverrides {
  /// 1 or 2.
  std::optional<int> descSlots;
  /// 1 or 2.
  std::optional<int> clusterM;
  /// 0: B's rows in order. 1: quad-ordered wherever the kernel and the
  /// problem allow it, else in order (the natural twin). Unset: quadBFits
  /// when a problem is given, else the configuration's own, dropped where
  /// the kernel cannot keep it.
  std::optional<int> quadB;
  /// 64, 128 or 192.
  std::optional<int> blockM;
  /// A multiple of 8 in [8, 256] (the FP8 kernels take at most 192).
  std::optional<int> blockN;
  /// >= 2; fewer than fit (more are ignored).
  std::optional<int> stages;
  /// In [0, 2^20]; > 0 only with Epilogue::Reduction (alone: Reduction for
  /// B > 0, Register for 0).
  std::optional<int> redMaxBlocks;
  std::optional<Epilogue> epilogue;
  /// Unsafe bits the kernel is built (or looked up) with; 0: none.
  unsigned unsafe = 0;
};

/// "" if every set field of `overrides` holds a value its rule (above)
/// allows, else a message naming the first override (by .meta key) and its
/// rule.
std::string checkOverrides(const ConfigOverrides &overrides);

/// Applies `overrides` to `config`, then the fix-ups that keep it a kernel
/// the bundle holds, in this order (docs/Heuristics.md):
///  1. desc_slots and cluster_m replace the fields; a parked config that
///     can no longer park becomes the in-place kernel (unparkIfUnfit).
///  2. block_n, then block_m (with math_warpgroups = block_m / 64), each
///     with the most stages that fit (unparking first where the tile cannot
///     park); block_m drops cluster_m = 2 where the problem's m-block count
///     is odd or block_m is 192. A tile checkConfig rejects is ignored.
///  3. stages: 2 up to the most that fit; more are ignored.
///  4. The epilogue (red_max_blocks alone: reduction for B > 0, register
///     for 0), only where `problem` is null or in place (a call with a
///     separate c has only the register epilogue): register or reduction
///     where checkConfig accepts it; in_place (cluster_m back to 1 unless
///     overrides.clusterM is 2); parked: the in-place kernel, parked where
///     parkFits. Each with the most stages that fit, then step 3 again.
///  5. quad_b (see ConfigOverrides::quadB; with a problem, N % 16 == 0 is
///     required too).
///  6. unsafe replaces the field.
/// `problem` may be null (bundle candidates). Returns "" or checkOverrides'
/// message; `config` is left unchanged on error.
std::string applyOverrides(KernelConfig &config,
                           const ConfigOverrides &overrides,
                           const Target &target,
                           const KGroupedProblem *problem);

} // namespace heuristics
} // namespace dgemm

#endif // DGEMM_HEURISTICS_KERNELCONFIG_H
