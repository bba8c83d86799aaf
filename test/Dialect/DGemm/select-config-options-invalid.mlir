// Out-of-range dgemm-select-config options are errors naming the option and
// its rule, not silently replaced by the heuristics' choice. Each RUN line
// enables the one expectation written for it below (its prefix replaced by
// the verifier's keyword), so that every other stays inert.
// RUN: sed 's|// CLUSTER-M-EXPECTED|// expected|' %s | dgemm-opt --dgemm-select-config=cluster-m=-1 -verify-diagnostics
// RUN: sed 's|// QUAD-B-EXPECTED|// expected|' %s | dgemm-opt --dgemm-select-config=quad-b=5 -verify-diagnostics
// RUN: sed 's|// DESC-SLOTS-EXPECTED|// expected|' %s | dgemm-opt --dgemm-select-config=desc-slots=-1 -verify-diagnostics
// RUN: sed 's|// NUM-SMS-EXPECTED|// expected|' %s | dgemm-opt --dgemm-select-config=num-sms=0 -verify-diagnostics
// RUN: sed 's|// UNSAFE-EXPECTED|// expected|' %s | dgemm-opt --dgemm-select-config=unsafe=skip_everything -verify-diagnostics
// The values at the ends of each range are accepted.
// RUN: dgemm-opt %s "--dgemm-select-config=cluster-m=2 quad-b=-1 desc-slots=2 num-sms=1 unsafe=none" -o /dev/null

// CLUSTER-M-EXPECTED-error @+5 {{dgemm-select-config: cluster-m must be 0 (the heuristics'), 1 or 2, got -1}}
// QUAD-B-EXPECTED-error @+4 {{dgemm-select-config: quad-b must be -1 (the heuristics'), 0 or 1, got 5}}
// DESC-SLOTS-EXPECTED-error @+3 {{dgemm-select-config: desc-slots must be 0 (the heuristics'), 1 or 2, got -1}}
// NUM-SMS-EXPECTED-error @+2 {{dgemm-select-config: num-sms must be >= 1, got 0}}
// UNSAFE-EXPECTED-error @+1 {{dgemm-select-config: unsafe must be none or a comma-separated list of skip_descriptor_drain, skip_proxy_fence; got 'skip_everything'}}
module {
  dgemm.gemm @seed_wgrad k_grouped_contiguous nt m = 2048 n = 2048 k = ?
      groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
}
