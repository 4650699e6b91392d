/* The device's measured ceilings, cached per device and driver so `bench`
 * measures them once, not on every run. The cache lives in
 * $XDG_CACHE_HOME/vkattn/ (else ~/.cache/vkattn/), one small JSON file per
 * device: peak-<device name>-<vendor>-<device id>-<driver>.json, holding
 * {"device": .., "fma_gflops": .., "copy_gbps": ..}. */
#ifndef ATTNBENCH_PEAK_CACHE_H
#define ATTNBENCH_PEAK_CACHE_H

#include <stdbool.h>

#include <vkattn/peak.h> /* not in vkattn.h */
#include <vkattn/vkattn.h>

/* The ceilings for ctx's device: read from the cache unless `remeasure`,
 * else measured (with a note on stderr) and written back. Returns false with
 * a message on stderr if they could not be had. */
bool ab_peak_get(vkattn_context *ctx, bool remeasure, vkattn_peak_result *out);

/* Stores a fresh measurement in the cache (best effort, silent on failure). */
void ab_peak_store(vkattn_context *ctx, const vkattn_peak_result *peak);

#endif
