//===- KernelBuilding.h - What the kernel builders share --------*- C++ -*-===//
//
// dgemm-lower-to-kernel builds one kernel per configuration, by kind: the
// k-grouped builder (LowerToKernel.cpp) and the m-grouped one
// (MGroupedKernel.cpp). They share the arithmetic helpers, the persistent
// tile schedule and the register budgets here.
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_LIB_DIALECT_DGEMM_TRANSFORMS_KERNELBUILDING_H
#define DGEMM_LIB_DIALECT_DGEMM_TRANSFORMS_KERNELBUILDING_H

#include "dgemm/Dialect/DGemm/IR/DGemm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

#include <tuple>

namespace mlir::dgemm::kernel_building {

/// Small arithmetic helpers on i32/i64 values.
struct Emitter {
  OpBuilder &b;
  Location loc;

  Value i32(int64_t v) {
    return b.create<arith::ConstantIntOp>(loc, b.getI32Type(), v);
  }
  Value i64(int64_t v) {
    return b.create<arith::ConstantIntOp>(loc, b.getI64Type(), v);
  }
  Value add(Value x, Value y) { return b.create<arith::AddIOp>(loc, x, y); }
  Value sub(Value x, Value y) { return b.create<arith::SubIOp>(loc, x, y); }
  Value mul(Value x, Value y) { return b.create<arith::MulIOp>(loc, x, y); }
  Value div(Value x, Value y) { return b.create<arith::DivUIOp>(loc, x, y); }
  Value rem(Value x, Value y) { return b.create<arith::RemUIOp>(loc, x, y); }
  Value ceilDiv(Value x, int64_t d) { return div(add(x, i32(d - 1)), i32(d)); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return b.create<arith::CmpIOp>(loc, p, x, y);
  }
  Value ext64(Value x) {
    return b.create<arith::ExtUIOp>(loc, b.getI64Type(), x);
  }
  /// `x` through an empty asm with side effects: the same value, but one
  /// that LLVM cannot hoist out of the loop it is read in, so that what is
  /// computed from it is computed there and holds no register across the
  /// loop (ptxas reads a kernel parameter from the constant bank at each
  /// use).
  Value opaque(Value x) {
    return b
        .create<LLVM::InlineAsmOp>(loc, b.getI32Type(), ValueRange{x},
                                   "mov.b32 $0, $1;", "=r,r",
                                   /*has_side_effects=*/true, false,
                                   LLVM::TailCallKind::None,
                                   LLVM::AsmDialectAttr(), ArrayAttr())
        .getResult(0);
  }
  /// Element `i` of an int32 device array (ks, the grouped layout).
  Value loadK(Value ks, Value i) {
    auto gep = b.create<LLVM::GEPOp>(loc, ks.getType(), b.getI32Type(), ks,
                                     ValueRange{i});
    return b.create<LLVM::LoadOp>(loc, b.getI32Type(), gep);
  }
};

/// The persistent tile schedule both roles walk: tile t = blockIdx.x, then
/// every gridDim.x-th tile; tiles are ordered (group, m-block, n-block).
/// With cluster_m = 2 the unit is a pair of m-blocks: cluster c (CTAs 2c and
/// 2c + 1, its rank being blockIdx.x % 2) takes pair c, then every
/// (gridDim.x / 2)-th pair, and rank r computes m-block 2 * pair + r. Both
/// CTAs of a cluster thus always work on the same group and n-block (the B
/// tile they share) with the same K. When the m-block count is odd the last
/// pair's second m-block lies past M: its CTA loads zeros (TMA fills out of
/// bounds) and stores nothing, but keeps the cluster's pipeline in step.
///
/// Each group's units are walked in bands of B m-units, B being the launch's
/// raster band (in m-blocks; docs/KernelABI.md) divided by cluster_m, at
/// least 1 and at most the group's m-unit count: band by band, and inside a
/// band n-block by n-block with the m-unit varying fastest (the last band
/// may be narrower). B = 1 is row order (n-block fastest). With B > 1 the
/// CTAs running at one time share more rows of B than in row order, where
/// for wide N every row of units sweeps all of the group's B; the runtime
/// chooses the band per call (docs/Heuristics.md).
struct TileSchedule {
  Value first, step, total, tilesPerGroup, nBlocks, mUnits;
  Value rank; ///< this CTA's rank in its cluster; null without clusters
  int64_t clusterM = 1;
  Value bandArg; ///< the launch's raster band, in m-blocks

  /// `groups`: the group count of the schedule (the kernel's G, or 1 for a
  /// kernel whose rows carry their group, m-grouped).
  static TileSchedule build(Emitter &e, KernelOp kernel, ConfigAttr config,
                            Value groups) {
    TileSchedule s;
    s.clusterM = config.getClusterM();
    Value cta = e.b.create<NVVM::BlockIdXOp>(e.loc, e.b.getI32Type());
    Value grid = e.b.create<NVVM::GridDimXOp>(e.loc, e.b.getI32Type());
    s.first = s.clusterM == 1 ? cta : e.div(cta, e.i32(s.clusterM));
    s.step = s.clusterM == 1 ? grid : e.div(grid, e.i32(s.clusterM));
    if (s.clusterM != 1)
      s.rank = e.rem(cta, e.i32(s.clusterM));
    Value mBlocks = e.ceilDiv(kernel.getArg(KernelOp::DimM), config.getBlockM());
    s.mUnits = s.clusterM == 1 ? mBlocks : e.ceilDiv(mBlocks, s.clusterM);
    s.nBlocks = e.ceilDiv(kernel.getArg(KernelOp::DimN), config.getBlockN());
    s.tilesPerGroup = e.mul(s.mUnits, s.nBlocks);
    s.total = e.mul(s.tilesPerGroup, groups);
    s.bandArg = kernel.getArg(KernelOp::RasterBand);
    return s;
  }

  /// (group, m-block, n-block) of schedule unit `t` for this CTA.
  std::tuple<Value, Value, Value> decompose(Emitter &e, Value t) const {
    Value g = e.div(t, tilesPerGroup);
    auto [mb, nb] = raster(e, e.rem(t, tilesPerGroup), mUnits);
    return {g, mb, nb};
  }

  /// (m-block, n-block) of unit `r` of a group of `units` m-units (of
  /// clusterM m-blocks) by nBlocks: bands of the launch's raster band m-units,
  /// each walked m-unit first.
  std::pair<Value, Value> raster(Emitter &e, Value r, Value units) const {
    // Units per band, in [1, units], so that band * nBlocks cannot
    // overflow; computed here for every tile (Emitter::opaque) rather than
    // once before the tile loop, where it held two registers across the
    // loop and made a 64-row kernel spill.
    Value band = e.opaque(bandArg);
    if (clusterM != 1)
      band = e.div(band, e.i32(clusterM));
    band = e.b.create<arith::MaxUIOp>(e.loc, band, e.i32(1));
    band = e.b.create<arith::MinUIOp>(e.loc, band, units);
    Value bandUnits = e.mul(band, nBlocks);
    Value start = e.mul(e.div(r, bandUnits), band);
    Value inBand = e.rem(r, bandUnits);
    Value rows = e.b.create<arith::MinUIOp>(e.loc, band, e.sub(units, start));
    Value mu = e.add(start, e.rem(inBand, rows));
    Value nb = e.div(inBand, rows);
    Value mb = mu;
    if (clusterM != 1)
      mb = e.add(e.mul(mu, e.i32(clusterM)), rank);
    return {mb, nb};
  }
};


/// Registers per math thread (setmaxnreg): what the 64K register file
/// leaves after the producer warpgroup's share, a multiple of 8. One math
/// warpgroup takes 240, two 232 (the producer keeps 40), three 160 (the
/// producer keeps 32: 128 * 32 + 384 * 160 = 65536).
inline int64_t mathRegisters(ConfigAttr config) {
  switch (config.getMathWarpgroups()) {
  case 1:
    return 240;
  case 2:
    return 232;
  default:
    return 160;
  }
}
inline int64_t producerRegisters(ConfigAttr config) {
  return config.getMathWarpgroups() <= 2 ? 40 : 32;
}

/// A dgemm.kernel named after `config` with the launch ABI's arguments
/// (docs/KernelABI.md) and a dgemm.warp_specialize whose producer and math
/// regions hold one empty block each.
std::pair<KernelOp, WarpSpecializeOp> createKernel(OpBuilder &b, Location loc,
                                                   ConfigAttr config);

/// Builds the m-grouped contiguous FP8 1D2D kernel of `gemm`'s config
/// (MGroupedKernel.cpp).
void buildMGroupedKernel(GemmOp gemm, OpBuilder &b);

} // namespace mlir::dgemm::kernel_building

#endif // DGEMM_LIB_DIALECT_DGEMM_TRANSFORMS_KERNELBUILDING_H
