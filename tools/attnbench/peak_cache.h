/* The device's measured ceilings, cached per device and driver so `bench`
 * measures them once, not on every run. The cache lives in
 * $XDG_CACHE_HOME/vkattn/ (else ~/.cache/vkattn/), one small JSON file per
 * device: peak-<device name>-<vendor>-<device id>-<driver>.json, holding
 * {"device": .., "driver": .., "fma_gflops": best, "copy_gbps": best,
 *  "measurements": [{"date": .., "fma_gflops": .., "copy_gbps": ..}, ..]}.
 * A measurement taken on a busy machine is low (140 -> 40 GFLOP/s seen), so
 * the fractions divide by the best of the last AB_PEAK_KEPT measurements, not
 * by the latest. A file of the first format ({"device", "fma_gflops",
 * "copy_gbps"}) reads as one measurement of unknown date; the top-level
 * best values keep that format readable by older attnbench builds. */
#ifndef ATTNBENCH_PEAK_CACHE_H
#define ATTNBENCH_PEAK_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include <vkattn/peak.h> /* not in vkattn.h */
#include <vkattn/vkattn.h>

/* Measurements kept per file: enough for a best-of over a few loaded runs;
 * older ones drop out, so a lasting change (clocks, power) shows after that
 * many `attnbench peak` runs (or delete the file). */
#define AB_PEAK_KEPT 8

/* The peak the fractions divide by, and where it comes from. */
typedef struct ab_peak_note {
    double fma_gflops, copy_gbps; /* the best of the kept measurements */
    char fma_date[32], copy_date[32]; /* UTC "2026-11-28T10:00:00Z"; "" = unknown (first format) */
    char device[256];             /* the device and driver they were taken on */
    char driver[32];
    unsigned measurements;        /* how many are kept */
} ab_peak_note;

/* The ceilings for ctx's device: the cache's best unless `remeasure`, else
 * measured (with a note on stderr) and added to the cache. *out gets the
 * best kept values (the fresh measurement when nothing could be cached);
 * note (may be NULL) where they come from. Returns false with a message on
 * stderr if they could not be had. */
bool ab_peak_get(vkattn_context *ctx, bool remeasure, vkattn_peak_result *out, ab_peak_note *note);

/* Adds a fresh measurement to the cache (best effort, silent on failure);
 * note (may be NULL) gets the best values kept afterwards, or the fresh
 * measurement alone when the cache cannot be read or written. */
void ab_peak_store(vkattn_context *ctx, const vkattn_peak_result *peak, ab_peak_note *note);

/* One line for people: "140 GFLOP/s FMA measured 2026-11-28T10:00:00Z, 12 GB/s
 * copy measured ..., on DEVICE (driver D), best of N" */
void ab_peak_note_text(const ab_peak_note *note, char *buf, size_t size);

/* The same as JSON: {"fma_gflops", "fma_measured", "copy_gbps", "copy_measured",
 * "device", "driver", "measurements"}, a date null where unknown. */
json_t *ab_peak_note_json(const ab_peak_note *note);

#endif
