/* tests/synthetic.h: what the writers of synthetic databases share (make_fixture.c,
 * make_planted.c): a small deterministic generator — the databases must be the same on every
 * machine — and the synthetic system their runs are recorded on. Header-only: each writer is one
 * program. */
#ifndef BENCHDB_TESTS_SYNTHETIC_H
#define BENCHDB_TESTS_SYNTHETIC_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "db.h"
#include "splitmix64.h"

static uint64_t rng_state;

static uint64_t rng_next(void) { return splitmix64(&rng_state); }

static double rng_uniform(void) { return ((double)(rng_next() >> 11) + 0.5) / 9007199254740992.0; }

/* Box-Muller */
static double rng_normal(void)
{
	return sqrt(-2.0 * log(rng_uniform())) * cos(6.283185307179586 * rng_uniform());
}

/* A 2-core synthetic CPU on host. */
static void synthetic_system(struct sysinfo *si, const char *host)
{
	memset(si, 0, sizeof(*si));
	snprintf(si->hostname, sizeof(si->hostname), "%s", host);
	snprintf(si->cpu_model, sizeof(si->cpu_model), "Synthetic CPU");
	si->cpu_cores = si->cpu_threads = 2;
	snprintf(si->blas, sizeof(si->blas), "none");
}

#endif
