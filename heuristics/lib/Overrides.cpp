//===- Overrides.cpp - Overrides of a selected k-grouped configuration ----===//
//
// checkOverrides and applyOverrides: the compiler's options and the
// runtime's DGEMM_* variables, checked on their own, then applied to a
// chosen configuration one field at a time, each kept only where the result
// is a valid kernel.
//
//===----------------------------------------------------------------------===//

#include "KGroupedModel.h"
#include "dgemm/Heuristics/Bf16Config.h"
#include "dgemm/Heuristics/KernelConfig.h"
#include "dgemm/Heuristics/MGroupedConfig.h"

#include <string>

using namespace dgemm::heuristics;
using namespace dgemm::heuristics::detail;

std::string dgemm::heuristics::checkOverrides(const ConfigOverrides &o) {
  auto bad = [](const char *key, const std::string &rule, int64_t got) {
    return std::string("the ") + key + " override must " + rule + ", got " +
           std::to_string(got);
  };
  if (o.descSlots && *o.descSlots != 1 && *o.descSlots != 2)
    return bad("desc_slots", "be 1 or 2", *o.descSlots);
  if (o.clusterM && *o.clusterM != 1 && *o.clusterM != 2)
    return bad("cluster_m", "be 1 or 2", *o.clusterM);
  if (o.quadB && *o.quadB != 0 && *o.quadB != 1)
    return bad("quad_b", "be 0 or 1", *o.quadB);
  if (o.blockM && *o.blockM != 64 && *o.blockM != 128 && *o.blockM != 192)
    return bad("block_m", "be 64, 128 or 192 (64 rows per math warpgroup)",
               *o.blockM);
  // The widest tile of any family (the BF16 kernels' 256; the FP8 kernels'
  // rules reject what their registers do not hold, and the override is
  // then ignored).
  if (o.blockN && (*o.blockN < 8 || *o.blockN > 256 || *o.blockN % 8 != 0))
    return bad("block_n", "be a multiple of 8 in [8, 256] (WGMMA N)",
               *o.blockN);
  if (o.stages && *o.stages < 2)
    return bad("stages", "be >= 2", *o.stages);
  if (o.redMaxBlocks &&
      (*o.redMaxBlocks < 0 || *o.redMaxBlocks > kMaxRedMaxBlocks))
    return bad("red_max_blocks",
               "be in [0, " + std::to_string(kMaxRedMaxBlocks) + "]",
               *o.redMaxBlocks);
  if (o.epilogue && !parseEpilogue(epilogueName(*o.epilogue)))
    return bad("epilogue",
               "be register, reduction, in_place or parked (0 to 3)",
               int(*o.epilogue));
  if (o.epilogue && o.redMaxBlocks) {
    bool reduction = *o.epilogue == Epilogue::Reduction;
    if (reduction && *o.redMaxBlocks == 0)
      return bad("red_max_blocks",
                 "be > 0 with the epilogue override reduction", 0);
    if (!reduction && *o.redMaxBlocks != 0)
      return bad("red_max_blocks",
                 std::string("be 0 with the epilogue override ") +
                     epilogueName(*o.epilogue) +
                     " (only the reduction epilogue has a bound)",
                 *o.redMaxBlocks);
  }
  if (o.unsafe & ~kUnsafeMask)
    return bad("unsafe",
               "be a set of skip_descriptor_drain (1) and skip_proxy_fence (2)",
               o.unsafe);
  return "";
}

void dgemm::heuristics::detail::applyTileOverrides(
    KernelConfig &config, const ConfigOverrides &o, const Target &target,
    const std::function<std::optional<KernelConfig>(int, int)> &tile) {
  KernelConfig c = config;
  auto tryTile = [&](int blockM, int blockN) {
    std::optional<KernelConfig> forced = tile(blockM, blockN);
    if (!forced)
      return;
    forced->numSMs = c.numSMs;
    if (checkConfig(*forced, target).empty())
      c = *forced;
  };
  if (o.blockN)
    tryTile(c.blockM, *o.blockN);
  if (o.blockM)
    tryTile(*o.blockM, c.blockN);
  if (o.stages && *o.stages <= mostStages(c, target)) {
    KernelConfig forced = c;
    forced.stages = *o.stages;
    if (checkConfig(forced, target).empty())
      c = forced;
  }
  c.unsafe = o.unsafe;
  config = c;
}

std::string dgemm::heuristics::applyOverrides(KernelConfig &config,
                                              const ConfigOverrides &o,
                                              const Target &target,
                                              const KGroupedProblem *problem) {
  if (std::string why = checkOverrides(o); !why.empty())
    return why;
  if (config.dtype == Dtype::Bf16) {
    applyBf16Overrides(config, o, target);
    return "";
  }
  if (config.kind != Kind::KGroupedContiguous) {
    applyMGroupedOverrides(config, o, target);
    return "";
  }
  KernelConfig c = config;
  auto valid = [&](const KernelConfig &k) {
    return checkConfig(k, target).empty();
  };
  // Quad-ordered B is decided last, for the kernel the overrides leave.
  const int ownQuadB = c.quadB;
  c.quadB = 0;
  if (o.descSlots)
    c.descSlots = *o.descSlots;
  if (o.clusterM)
    c.clusterM = *o.clusterM;
  // CTA pairs cannot park: the pair's in-place kernel.
  unparkIfUnfit(c, target);
  if (o.blockN) {
    KernelConfig forced = c;
    forced.blockN = *o.blockN;
    unparkIfUnfit(forced, target);
    forced.stages = mostStages(forced, target);
    if (valid(forced))
      c = forced;
  }
  if (o.blockM) {
    KernelConfig forced = c;
    forced.blockM = *o.blockM;
    forced.mathWarpgroups = forced.blockM / 64;
    unparkIfUnfit(forced, target);
    forced.stages = mostStages(forced, target);
    // Multicast pairs need an even m-block count (known with a problem), and
    // none are built with three math warpgroups.
    if (forced.clusterM == 2 &&
        (forced.blockM == 192 || (problem && problem->m >= 0 &&
                                  ceilDiv(problem->m, forced.blockM) % 2 != 0)))
      forced.clusterM = 1;
    if (valid(forced))
      c = forced;
  }
  // Fewer stages than fit; applied again after every change of the most
  // that fit.
  auto applyStages = [&] {
    if (o.stages && *o.stages <= mostStages(c, target)) {
      KernelConfig forced = c;
      forced.stages = *o.stages;
      if (valid(forced))
        c = forced;
    }
  };
  applyStages();
  // A call with a separate c has only the register epilogue.
  if ((o.epilogue || o.redMaxBlocks) && (!problem || problem->inPlace)) {
    Epilogue epilogue;
    int redMaxBlocks = 0;
    if (o.epilogue) {
      epilogue = *o.epilogue;
      if (epilogue == Epilogue::Reduction)
        redMaxBlocks = o.redMaxBlocks.value_or(kRedEpilogueTileBlocks);
    } else {
      redMaxBlocks = *o.redMaxBlocks;
      epilogue = redMaxBlocks > 0 ? Epilogue::Reduction : Epilogue::Register;
    }
    KernelConfig forced = c;
    forced.epilogue = isInPlaceKernel(epilogue) ? Epilogue::InPlace : epilogue;
    forced.redMaxBlocks = redMaxBlocks;
    // The heuristics never pair the in-place kernel, so a bundle holds a
    // paired one only when built with cluster-m=2: keep the pair only when
    // the overrides asked for it.
    if (isInPlaceKernel(epilogue) && forced.clusterM == 2 &&
        o.clusterM.value_or(0) != 2)
      forced.clusterM = 1;
    forced.stages = mostStages(forced, target);
    if (valid(forced)) {
      c = forced;
      // Parked where the tile can park, else the in-place kernel.
      KernelConfig parked = c;
      parked.epilogue = Epilogue::Parked;
      parked.stages = mostStages(parked, target);
      if (epilogue == Epilogue::Parked && parkFits(parked, target) &&
          valid(parked))
        c = parked;
      applyStages();
    }
  }
  int quadB = o.quadB ? *o.quadB : problem ? 1 : ownQuadB;
  if (quadB) {
    KernelConfig quad = c;
    quad.quadB = 1;
    c.quadB = valid(quad) && (!problem || problem->n % 16 == 0) ? 1 : 0;
  }
  c.unsafe = o.unsafe;
  config = c;
  return "";
}
